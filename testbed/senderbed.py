"""Beds for flow-completion-time experiments: AgentBed, a Mininet network
on the sandboxed switch with servers in the host agent's cgroup
(testbed/leafspine.py builds on it too), and SenderBed, the thesis's
micro-benchmark topology: one switch, four hosts (a Mininet star,
testbed/net.py).  The senders n1, n2 and n3 run servers in one cgroup with
the host agent attached; the receiver n0 runs a client behind the awafs
port p0, whose threshold is sampled while the client runs.
testbed/micro.py (nginx) and testbed/flowbench.py (the project's
generator) start the servers.

Transport (testbed/transport.py): 'cubic', 'bbr', 'dctcp' or 'mcp' (or
another congestion control the kernel has), set on every host and for the
senders' cgroup, and proved from the live sockets during every run; with
'dctcp' and 'mcp' (awafs_dctcp, awafs_mcp: the host agent's) the awafs port
marks CE above ECN_THRESHOLD packets."""

import csv
import shutil
import subprocess
import tempfile
import time
from functools import partial
from pathlib import Path

from testbed.hosts import Cgroup
from testbed.net import AwafsNet, StarTopo
from testbed.traffic import WIRE_OVERHEAD
from testbed.tunnel import TunnelTopo
from testbed.tunnel import connect as connect_tunnel
from testbed.transport import (Allowed, Proof, ecn, set_default, spec,
                               uses_agent_cc)

REPO = Path(__file__).resolve().parent.parent
AGENT = str(REPO / "build" / "bin" / "awafs-host")
AWAFS_PORT = "p0"
# DCTCP's marking threshold K: the thesis's 65 packets serve 10 Gb/s; DCTCP
# needs K above C x RTT / 7 (under a packet at 100 Mbit/s here), and 20
# packets (2.4 ms at 100 Mbit/s; the DCTCP paper's value for 1 Gb/s) leaves
# room for the PMD's batching.
ECN_THRESHOLD = 20
CC_AVAILABLE = "/proc/sys/net/ipv4/tcp_available_congestion_control"
PROOF_INTERVAL_S = 2.0  # Between two reads of the sockets' transport,
PROOF_POLL_S = 0.05     # ... until a server's and a client's were seen.


def agent(*args, **kw):
    return subprocess.run([AGENT, *args], check=True, capture_output=True,
                          text=True, **kw)


class AgentBed:
    """A Mininet network ('topo') on the sandboxed switch whose servers run
    in one cgroup with the host agent attached.  'transport'
    (testbed/transport.py) is every host's default congestion control and
    the agent selects it for the cgroup's connections (with 'mcp', its
    servers' awafs_mcp; the agent's awafs_dctcp and awafs_mcp are
    registered unless they were).  'agent_args': more arguments of
    'awafs-host attach' (--karuna).  Subclasses start the servers
    (start_servers()).  After a run, 'transport_record'
    says what the sockets ran (Proof.record()).  'prepare': AwafsNet's."""

    def __init__(self, name, topo, transport="cubic", static_arp=False,
                 agent_args=(), prepare=None):
        server_cc, other_cc, _ = spec(transport)
        self.transport = transport
        self.transport_record = None
        self.www = Path(tempfile.mkdtemp(prefix=f"awafs-{name}-"))
        self.www.chmod(0o755)
        self.cg = None
        self.servers = []
        self.registered_dctcp = False
        self.allowed = Allowed()
        # Receive processing on the PMD's core: at 100 Mbit/s it costs the
        # PMD little, elsewhere it holds up every port (testbed/net.py).
        self.net = AwafsNet(topo, static_arp=static_arp, prepare=prepare,
                            receive_off_pmd=False)
        try:
            self.sb = self.net.sb
            if uses_agent_cc(transport) \
                    and "awafs_mcp" not in Path(CC_AVAILABLE).read_text():
                agent("dctcp", "register")
                self.registered_dctcp = True
            self.allowed.add(server_cc, other_cc)
            for h in self.net.hosts:
                set_default(h, other_cc)
            self.cg = Cgroup(f"awafs-{name}")
            agent("attach", "--cgroup", str(self.cg.path), "--cc", server_cc,
                  *agent_args)
            self.servers = self.start_servers()
        except BaseException:
            self.close()
            raise

    def proof(self):
        """A Proof of this bed's transport for its hosts and servers."""
        ports = {}
        for s in self.servers:
            ports.setdefault(s.host.name, set()).add(s.port)
        return Proof(self.transport, self.net.hosts, ports)

    def start_servers(self):
        raise NotImplementedError

    def close(self):
        for s in self.servers:
            s.stop()
        if self.cg:
            # An agent that was never built attached nothing; the switch
            # must go all the same.
            if Path(AGENT).exists():
                subprocess.run([AGENT, "detach", "--cgroup",
                                str(self.cg.path)], capture_output=True)
            self.cg.delete()
        self.net.close()
        self.allowed.restore()
        shutil.rmtree(self.www, ignore_errors=True)
        if self.registered_dctcp:
            subprocess.run([AGENT, "dctcp", "unregister"], capture_output=True)


class SenderBed(AgentBed):
    """n0 (receiver) and n1..n3 (senders) on switch br0, and 'extra_hosts'
    (names) beside them; or, with 'tunnel' ("vxlan" or "geneve"), the
    senders on a tunnelled hypervisor and n0 at the tunnel's remote end
    (testbed/tunnel.py).  Subclasses start the servers
    (start_servers())."""

    def __init__(self, name, transport="cubic", agent_args=(),
                 extra_hosts=(), tunnel=None):
        if tunnel:
            topo = TunnelTopo()
            prepare = partial(connect_tunnel, tunnel)
        else:
            topo = StarTopo(names=["n0", "n1", "n2", "n3", *extra_hosts])
            prepare = None
        super().__init__(name, topo, transport, agent_args=agent_args,
                         prepare=prepare)

    @property
    def receiver(self):
        return self.net["n0"]

    @property
    def senders(self):
        return [self.net[n] for n in ("n1", "n2", "n3")]

    def measure(self, qos, client, out, sample_s=0.25):
        """Runs 'client' (argv of a program on n0 that writes the CSV 'out')
        with the awafs configuration 'qos' on p0; returns the CSV's rows and
        the thresholds sampled while it ran, as (seconds, [bytes, ...])."""
        if ecn(self.transport):
            qos = {"ecn-threshold": ECN_THRESHOLD, **qos}
        proof = self.proof()
        rows, samples, stats = run_clients(
            self.sb, {AWAFS_PORT: qos}, [(self.receiver, client, out)],
            sample_s, proof)
        self.port_stats = stats[AWAFS_PORT]
        self.transport_record = proof.record()
        return rows[0], samples[AWAFS_PORT]


def carried_bps(stats):
    """The load a port carried during a run (run_clients()'s counters), in
    bit/s of wire (frames and AWAFS_WIRE_OVERHEAD each, as its max-rate
    counts them)."""
    return ((stats["sent_bytes"] + WIRE_OVERHEAD * stats["sent"]) * 8
            / stats["seconds"])


def run_clients(sb, qos_by_port, clients, sample_s, proof=None):
    """Configures awafs with qos_by_port[PORT] on each PORT of sandbox
    'sb', runs 'clients' -- (host, argv, CSV it writes) -- at once, samples
    every port's thresholds while they run, and removes the QoS.  With
    'proof' (a testbed.transport.Proof), reads the hosts' sockets while the
    clients run (every PROOF_POLL_S until it saw a server's and a client's
    connection, then every PROOF_INTERVAL_S) and fails the run
    (TransportError) on one that runs another transport, or if it saw
    none.  Returns
    the clients' CSV rows and, per port, the thresholds sampled as
    (seconds, [bytes, ...]) and the port's counters at the end
    {"dropped": packets dropped, "sent": packets sent, "sent_bytes": their
    bytes (frames' lengths), "seconds": from the clients' start to the last
    one's end, "ecn_marks": packets
    marked CE, "held_down": segments kept in their message's queue,
    "tardy_flows" and "tardy_packets": messages that retransmitted and
    their segments sent to queue 0 (trust=switch|verify), "details" and
    "queues": all of qos/show}."""
    for port, qos in qos_by_port.items():
        sb.set_awafs(port, **qos)
        _, details, _ = sb.qos_show(port)
        if "error" in details:
            raise RuntimeError(f"awafs configuration {qos} on {port} "
                               f"rejected: {details['error']}")
    t0 = time.monotonic()
    procs = [host.popen(*argv) for host, argv, _ in clients]
    samples = {port: [] for port in qos_by_port}
    proved_at = None
    next_sample = t0
    try:
        while any(p.poll() is None for p in procs):
            now = time.monotonic()
            if now >= next_sample:
                next_sample = now + sample_s
                for port, series in samples.items():
                    _, details, _ = sb.qos_show(port)
                    series.append((now - t0, [
                        int(v)
                        for v in details["current-thresholds"].split(",")]))
            if proof and (proved_at is None
                          or now - proved_at >= PROOF_INTERVAL_S):
                if proof.check() and proof.both_sides_seen():
                    proved_at = now
            time.sleep(PROOF_POLL_S if proof and proved_at is None
                       else max(0.0, next_sample - time.monotonic()))
        if proof:
            proof.require_seen()
    except BaseException:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait()
        for port in qos_by_port:
            sb.vsctl("clear", "port", port, "qos")
        sb.vsctl("--all", "destroy", "qos")
        raise
    seconds = time.monotonic() - t0
    # The reports that ride on the connections' last segments (FIN) reach
    # the windows at the next recalculation.
    time.sleep(0.5)
    stats = {}
    for port in qos_by_port:
        _, details, queues = sb.qos_show(port)
        stats[port] = {"dropped": sum(int(q.get("dropped-packets", 0))
                                      for q in queues.values()),
                       "sent": sum(int(q.get("tx_packets", 0))
                                   for q in queues.values()),
                       "sent_bytes": sum(int(q.get("tx_bytes", 0))
                                         for q in queues.values()),
                       "seconds": seconds,
                       "ecn_marks": int(details.get("ecn-marks", 0)),
                       "held_down": int(details.get("switch-held-down",
                                                    0)),
                       "tardy_flows": int(details.get("tardy-flows", 0)),
                       "tardy_packets": int(details.get("tardy-packets",
                                                        0)),
                       "details": details, "queues": queues}
        sb.vsctl("clear", "port", port, "qos")
    sb.vsctl("--all", "destroy", "qos")
    for p, (_, argv, _) in zip(procs, clients):
        if p.returncode:
            raise RuntimeError(f"{' '.join(argv[:3])} failed")
    rows = []
    for _, _, out in clients:
        with open(out) as f:
            rows.append(list(csv.DictReader(f)))
    return rows, samples, stats

"""The thesis's heterogeneous-traffic experiment (§5.6) on a small
leaf-spine network (testbed/net.py, LeafSpineTopo): 2 leaves, 2 spines, 2
hosts per leaf, every switch a bridge of one sandboxed ovs-vswitchd.

Every egress port of the fabric is an awafs port, shaped: toward a host at
'rate', between a leaf and a spine at rate x hosts-per-leaf / spines, so
that the fabric is not oversubscribed (the thesis's is not either).  Each
host runs a flowgen server (testbed/flowgen.py) in the host agent's cgroup.
Traffic between hosts i and j follows web search if i < j and data mining
otherwise (the thesis's pattern): host j runs one flowgen client per
workload toward the servers of that workload, which together offer 'load'
of j's downlink, shared evenly among its senders.  So each downlink sees
its own mix -- h1 only data mining, the last host only web search -- and a
static threshold set cannot match every port.  Transport: DCTCP with ECN
(testbed/transport.py), as in the thesis."""

from testbed.flowbench import (PORT, FlowgenServer, base_rtt_us,
                               client_argv)
from testbed.flowgen import merge_logs
from testbed.net import LeafSpineTopo
from testbed.senderbed import AgentBed, ECN_THRESHOLD, run_clients
from testbed.workload import workloads_dir

LEAVES, SPINES, PER_LEAF = 2, 2, 2


def workload_between(i, j):
    """The workload of traffic from host i to host j (§5.6)."""
    return "websearch" if i < j else "datamining"


class LeafSpineBed(AgentBed):
    def __init__(self):
        super().__init__("leafspine", LeafSpineTopo(
            leaves=LEAVES, spines=SPINES, per_leaf=PER_LEAF), "dctcp",
            static_arp=True)

    def start_servers(self):
        return [FlowgenServer(h, self.www / f"server-{h.index}.csv", False,
                              self.cg) for h in self.net.hosts]

    def ports(self, rate):
        """Every egress port of the fabric with its rate: {port: bits/s}."""
        uplink = rate * PER_LEAF // SPINES
        rates = {}
        for sw in self.net.net.switches:
            for intf in sw.intfList():
                if intf.name == "lo":
                    continue
                peer = intf.link.intf2 if intf.link.intf1 is intf \
                    else intf.link.intf1
                to_host = peer.node in self.net.hosts
                rates[intf.name] = rate if to_host else uplink
        return rates

    def downlinks(self):
        """The ports toward each host: {host name: port}."""
        return {h.name: h.intf("eth0").link.intf2.name
                for h in self.net.hosts}

    def measure(self, qos, load, rate, flows_per_second_of, seconds, seed=1,
                sample_s=1.0):
        """Runs the heterogeneous traffic at 'load' (a fraction of each
        downlink) for about 'seconds', with awafs 'qos' (and ECN) on every
        egress port.  flows_per_second_of(workload, bits/s) gives how many
        flows a client offers.  Returns the flows' rows (merged with the
        servers' counters; with 'workload', 'receiver' and 'sender' added)
        and the thresholds sampled per port."""
        hosts = self.net.hosts
        clients, tags = [], []
        first_id = 1
        for j, dst in enumerate(hosts):
            for wl in ("websearch", "datamining"):
                srcs = [h for i, h in enumerate(hosts)
                        if i != j and workload_between(i, j) == wl]
                if not srcs:
                    continue
                bps = load * rate * len(srcs) / (len(hosts) - 1)
                n = max(20, int(flows_per_second_of(wl, bps) * seconds))
                out = self.www / f"client-{dst.name}-{wl}.csv"
                servers = [f"{s.addr}:{PORT}" for s in srcs]
                cdf = workloads_dir() / f"{wl}.cdf"
                argv = client_argv(servers, [(cdf, n)], bps, rate,
                                   base_rtt_us(dst, servers), out,
                                   seed=seed * 100 + j, first_id=first_id)
                clients.append((dst, argv, out))
                tags.append((wl, dst.name))
                first_id += n
        # The clients run outside the agent's cgroup, so that their
        # requests are not flows the ports learn (the thesis's flows are
        # the responses alone), and carry no AWAFS option: frames the
        # awafs type sends to 'default-queue', the lowest by default.
        # Every port here is an awafs port, and a request crosses its
        # server's downlink, where in the lowest queue it waited behind all
        # the others, hundreds of ms to seconds; queue 0 is where PIAS's
        # tagging puts a request (its first bytes).
        qos_by_port = {port: {**qos, "max-rate": r,
                              "ecn-threshold": ECN_THRESHOLD,
                              "default-queue": 0}
                       for port, r in self.ports(rate).items()}
        proof = self.proof()
        _, samples, self.port_stats = run_clients(self.sb, qos_by_port,
                                                  clients, sample_s, proof)
        self.transport_record = proof.record()
        addr_of = {h.addr: h.name for h in hosts}
        rows = []
        for (wl, receiver), (_, _, out) in zip(tags, clients):
            for r in merge_logs(out, [s.log for s in self.servers]):
                r["workload"], r["receiver"] = wl, receiver
                r["sender"] = addr_of[r["server"].rsplit(":", 1)[0]]
                rows.append(r)
        return rows, samples

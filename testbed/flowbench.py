"""The project's traffic generator (testbed/flowgen.py) on the four-host
bed (testbed/senderbed.py): a flowgen server on each sender n1..n3, in the
host agent's cgroup, and the client on n0."""

import sys

from testbed.flowgen import merge_logs
from testbed.senderbed import SenderBed
from testbed.servers import Server

FLOWGEN = [sys.executable, "-m", "testbed.flowgen"]
PORT = 7000


class FlowgenServer(Server):
    def __init__(self, host, log, one_call, cgroup, karuna=None):
        self.log = log
        super().__init__(host, [*FLOWGEN, "server", "--addr", host.addr,
                                "--port", str(PORT), "--log", str(log)]
                         + (["--one-call"] if one_call else [])
                         + (["--karuna", karuna] if karuna else []),
                         PORT, cgroup)


def base_rtt_us(host, servers, per_flow=False):
    """flowgen's base RTT from 'host' to 'servers' (addr:port), measured
    while no awafs QoS is configured, so that no switch learns its probes."""
    argv = [*FLOWGEN, "probe"]
    for s in servers:
        argv += ["--server", s]
    return int(host.run(*argv, *(["--per-flow"] if per_flow else []))
               .stdout)


def client_argv(servers, phases, load, rate, base_rtt, out, seed=1,
                first_id=1, per_flow=False):
    """flowgen's client command line: for each (cdf, flows) of 'phases',
    'flows' flows to the 'servers' (addr:port) offered at 'load' bits/s,
    their slowdowns against 'rate' and the base RTT 'base_rtt' (us); the
    rows go to the CSV 'out'."""
    argv = [*FLOWGEN, "client", "--load", str(load), "--rate",
            str(rate), "--seed", str(seed), "--first-id",
            str(first_id), "--base-rtt-us", str(base_rtt), "--out", str(out)]
    for cdf, flows in phases:
        argv += ["--phase", f"{cdf}:{flows}"]
    for srv in servers:
        argv += ["--server", srv]
    return argv + (["--per-flow"] if per_flow else [])


class FlowBench(SenderBed):
    """'karuna': for each sender n1..n3, flowgen's --karuna ("size",
    "deadline:MS" or None); the host agent then copies socket marks."""

    def __init__(self, one_call=False, transport="cubic", karuna=None):
        self.one_call = one_call
        self.karuna = karuna or [None] * 3
        super().__init__("flowbench", transport,
                         agent_args=["--karuna"] if karuna else [])

    def start_servers(self):
        return [FlowgenServer(h, self.www / f"server-{h.index}.csv",
                              self.one_call, self.cg, k)
                for h, k in zip(self.senders, self.karuna)]

    def measure(self, qos, phases, load, rate, seed=1, per_flow=False,
                sample_s=0.5):
        """Flows offered at 'load' bits/s through p0 configured with 'qos'
        (its max-rate is 'rate'): for each (cdf, flows) of 'phases' in turn,
        'flows' flows of sizes from 'cdf'.  Returns the flows' rows (with
        retransmits and timeouts, and their phase) and the sampled
        thresholds."""
        out = self.www / "client.csv"
        servers = [f"{h.addr}:{PORT}" for h in self.senders]
        client = client_argv(servers, phases, load, rate,
                             base_rtt_us(self.receiver, servers, per_flow),
                             out, seed=seed, per_flow=per_flow)
        _, thresholds = super().measure({**qos, "max-rate": rate}, client,
                                        out, sample_s)
        return merge_logs(out, [s.log for s in self.servers]), thresholds

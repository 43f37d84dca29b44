"""The project's traffic generator (testbed/flowgen.py) on the three-host
bed (testbed/senderbed.py): a flowgen server on each sender, in the host
agent's cgroup, and the client on h2."""

import sys
from pathlib import Path

from testbed.flowgen import merge_logs
from testbed.senderbed import REPO, SenderBed
from testbed.servers import Server

FLOWGEN = str(REPO / "testbed" / "flowgen.py")
PORT = 7000


class FlowgenServer(Server):
    def __init__(self, host, log, one_call, cgroup):
        self.log = log
        super().__init__(host, [sys.executable, FLOWGEN, "server", "--addr",
                                host.addr, "--port", str(PORT), "--log",
                                str(log)] + (["--one-call"] if one_call
                                             else []), PORT, cgroup)


class FlowBench(SenderBed):
    def __init__(self, one_call=False):
        self.one_call = one_call
        super().__init__("flowbench")

    def start_servers(self):
        return [FlowgenServer(h, Path(self.www) / f"server-{h.index}.csv",
                              self.one_call, self.cg) for h in self.senders]

    def measure(self, qos, cdf, flows, load, rate, seed=1, per_flow=False,
                sample_s=0.5):
        """'flows' flows of sizes from 'cdf' offered at 'load' bits/s through
        p2 configured with 'qos' (its max-rate is 'rate'); returns the flows'
        rows (with retransmits and timeouts) and the sampled thresholds."""
        out = Path(self.www) / "client.csv"
        client = [sys.executable, FLOWGEN, "client", "--cdf", str(cdf),
                  "--load", str(load), "--rate", str(rate), "--flows",
                  str(flows), "--seed", str(seed), "--out", str(out)]
        for h in self.senders:
            client += ["--server", f"{h.addr}:{PORT}"]
        client += ["--per-flow"] if per_flow else []
        _, thresholds = super().measure({**qos, "max-rate": rate}, client,
                                        out, sample_s)
        return merge_logs(out, [s.log for s in self.servers]), thresholds

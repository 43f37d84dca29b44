"""Three hosts on the sandboxed switch for flow-completion-time
experiments: servers on h1 and h3 (the senders) in one cgroup with the host
agent attached, a client on h2 behind the awafs port p2, the threshold
sampled while a client runs.  testbed/micro.py (nginx) and
testbed/flowbench.py (the project's generator) start the servers."""

import csv
import subprocess
import tempfile
import time
from pathlib import Path

from testbed.hosts import Cgroup, HostPair

REPO = Path(__file__).resolve().parent.parent
AGENT = str(REPO / "build" / "bin" / "awafs-host")


class SenderBed:
    """Three hosts on the switch: servers on h1 and h3 in one cgroup with
    the host agent attached, the client on h2 behind the awafs port p2.
    Subclasses start the servers."""

    def __init__(self, name):
        self.www = tempfile.mkdtemp(prefix=f"awafs-{name}-")
        Path(self.www).chmod(0o755)
        self.hp = HostPair(3)
        self.senders = (self.hp.h1, self.hp.hosts[2])
        self.cg = None
        self.servers = []
        try:
            self.cg = Cgroup(f"awafs-{name}")
            subprocess.run([AGENT, "attach", "--cgroup", str(self.cg.path)],
                           check=True, capture_output=True)
            self.servers = self.start_servers()
        except BaseException:
            self.close()
            raise

    def start_servers(self):
        raise NotImplementedError

    def close(self):
        for s in self.servers:
            s.stop()
        if self.cg:
            subprocess.run([AGENT, "detach", "--cgroup", str(self.cg.path)],
                           capture_output=True)
            self.cg.delete()
        self.hp.close()

    def measure(self, qos, client, out, sample_s=0.25):
        """Runs 'client' (argv of a program on h2 that writes the CSV 'out')
        with the awafs configuration 'qos' on p2; returns the CSV's rows and
        the thresholds sampled while it ran, as (seconds, [bytes, ...])."""
        sb = self.hp.sb
        sb.set_awafs("p2", **qos)
        _, details, _ = sb.qos_show("p2")
        if "error" in details:
            raise RuntimeError(f"awafs configuration {qos} rejected: "
                               f"{details['error']}")
        t0 = time.monotonic()
        proc = self.hp.h2.popen(*client)
        thresholds = []
        while proc.poll() is None:
            _, details, _ = sb.qos_show("p2")
            thresholds.append((time.monotonic() - t0, [
                int(v) for v in details["current-thresholds"].split(",")]))
            time.sleep(sample_s)
        sb.vsctl("clear", "port", "p2", "qos", "--", "--all", "destroy",
                 "qos")
        if proc.returncode:
            raise RuntimeError(f"{client[1]} failed")
        with open(out) as f:
            return list(csv.DictReader(f)), thresholds

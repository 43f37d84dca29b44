"""End hosts for end-to-end tests: Mininet hosts (network namespaces) on
the sandboxed OVS-DPDK switch (testbed/net.py), real Linux TCP between them,
and cgroup v2 directories for the host agent."""

import os
import time
from pathlib import Path

from testbed.net import AwafsNet, StarTopo

CGROUP2 = Path("/sys/fs/cgroup/unified")


def cgroup2_root():
    """Where cgroup v2 is mounted: the hybrid path or the unified one."""
    for path in (CGROUP2, Path("/sys/fs/cgroup")):
        if (path / "cgroup.procs").exists() and \
                (path / "cgroup.controllers").exists():
            return path
    return None


class Cgroup:
    """A cgroup v2 directory for the sender's processes."""

    def __init__(self, name):
        root = cgroup2_root()
        if root is None:
            raise RuntimeError("no cgroup v2 hierarchy mounted")
        self.path = root / f"{name}-{os.getpid()}"
        self.path.mkdir(exist_ok=True)

    def join(self):
        """Moves the calling process into the cgroup.  Used between fork and
        exec ('ip netns exec' remounts /sys, hiding the cgroup tree)."""
        with open(self.path / "cgroup.procs", "w") as f:
            f.write(str(os.getpid()))

    def delete(self):
        # Processes must have exited; a cgroup with members cannot go.
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


class HostPair:
    """Hosts h1 (sender) and h2 (receiver) -- and h3 ... hN with 'n' -- on
    bridge br0 (a Mininet star, testbed/net.py), host i on port p<i> with
    address SUBNET.i, L2 learning; AWAFS goes on p2, toward the receiver."""

    def __init__(self, n=2):
        self.net = AwafsNet(StarTopo(names=[f"h{i}" for i in range(1, n + 1)]))
        self.sb = self.net.sb
        self.hosts = self.net.hosts
        self.h1, self.h2 = self.hosts[:2]

    def close(self):
        self.net.close()

"""End hosts for end-to-end tests: network namespaces connected to the
sandboxed OVS-DPDK switch, each through a veth pair whose switch end is a
net_af_packet port, real Linux TCP between them, and cgroup v2 directories
for the host agent.

Offloads are off on both veth ends: with them on, the kernel would hand the
af_packet PMD 64 kB TCP super-packets and checksum-less segments."""

import os
import subprocess
import time
from pathlib import Path

from testbed.ovs_sandbox import OvsSandbox
from testbed.traffic import ip

CGROUP2 = Path("/sys/fs/cgroup/unified")
SUBNET = "10.77.0"


def cgroup2_root():
    """Where cgroup v2 is mounted: the hybrid path or the unified one."""
    for path in (CGROUP2, Path("/sys/fs/cgroup")):
        if (path / "cgroup.procs").exists() and \
                (path / "cgroup.controllers").exists():
            return path
    return None


class Host:
    def __init__(self, index):
        self.index = index
        self.ns = f"awafs-h{index}"
        self.veth = f"awh{index}"
        self.addr = f"{SUBNET}.{index}"
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
        ip("link", "del", self.veth, check=False)
        ip("netns", "add", self.ns)
        ip("link", "add", self.veth, "type", "veth", "peer", "name", "eth0",
           "netns", self.ns)
        self.run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        with open(f"/proc/sys/net/ipv6/conf/{self.veth}/disable_ipv6",
                  "w") as f:
            f.write("1")
        for cmd in (["ethtool", "-K", self.veth, "tx", "off", "tso", "off",
                     "gso", "off", "gro", "off"],):
            subprocess.run(cmd, capture_output=True, check=True)
        self.run("ethtool", "-K", "eth0", "tx", "off", "tso", "off", "gso",
                 "off", "gro", "off")
        self.run("ip", "addr", "add", f"{self.addr}/24", "dev", "eth0")
        self.run("ip", "link", "set", "eth0", "up")
        self.run("ip", "link", "set", "lo", "up")
        ip("link", "set", self.veth, "up")

    def run(self, *cmd, check=True, cgroup=None, **kw):
        """Runs 'cmd' in the namespace (in 'cgroup', a Cgroup, if given)."""
        return subprocess.run(["ip", "netns", "exec", self.ns, *cmd],
                              check=check, capture_output=True, text=True,
                              preexec_fn=cgroup.join if cgroup else None,
                              **kw)

    def popen(self, *cmd, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.ns, *cmd], **kw)

    def delete(self):
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
        ip("link", "del", self.veth, check=False)


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
    bridge br0, host i on port p<i>, L2 learning; AWAFS goes on p2, toward
    the receiver."""

    def __init__(self, n=2):
        self.hosts = [Host(i) for i in range(1, n + 1)]
        self.h1, self.h2 = self.hosts[:2]
        self.sb = OvsSandbox()
        try:
            self.sb.start()
            self.sb.add_bridge()
            for h in self.hosts:
                self.sb.add_dpdk_port(
                    "br0", f"p{h.index}",
                    f"net_af_packet{h.index},iface={h.veth}", h.index)
            for h in self.hosts[1:]:
                self.h1.run("ping", "-c", "1", "-W", "5", h.addr)
        except BaseException:
            self.close()
            raise

    def close(self):
        self.sb.stop()
        for h in self.hosts:
            h.delete()

"""Topologies through Mininet's Python API on the sandboxed, patched
OVS-DPDK switch.

Mininet builds the hosts (network namespaces), the links (veth pairs) and
the switches from a Topo.  Its switch classes drive a kernel or user-space
OVS through the system's ovs-vsctl; AwafsSwitch instead makes each Mininet
switch a bridge (datapath_type=netdev) of one sandboxed, patched
ovs-vswitchd (testbed/ovs_sandbox.py) and attaches each of its links as a
DPDK port on the net_af_packet PMD.  Every switch of a network shares that
one ovs-vswitchd and its one PMD core.

Offloads are off on every veth end: with them on, the kernel would hand the
af_packet PMD 64 kB TCP super-packets and checksum-less segments.

The hosts' programs stay off the PMD's core, as a hypervisor's guests do:
they run on the other CPUs.  Their receive processing the kernel does on
the CPU that sent the frame into the veth, the PMD's, inside its send call,
unless a bed moves it to the hosts' CPUs too (RPS, 'receive_off_pmd').
That is a trade.  On the PMD's core a receiver's TCP stack takes PMD time
at every frame: iperf3 through a port shaped to 1000 Mbit/s got 676-932
Mbit/s from run to run on the slow machine, with RPS 932-939
(tests/test_shaper_rate.py).  On the hosts' core, which runs every host's
programs, a port's sends wait for that core (probably because the
af_packet PMD's transmit ring frees a frame only when the kernel frees its
packet, once the receiver has processed it): data mining at 50 % through a
port shaped to 100 Mbit/s, DCTCP, dropped a quarter of the packets the
port took over 20 runs, and queue 0 waited up to 98 ms; without RPS, in
that seed's run, none and 6 ms.  So the evaluation's beds at 100 Mbit/s
(testbed/senderbed.py) leave it on the PMD's core, and a bed that measures
a shaper at line rate moves it.

Only the Python API is used, never 'mn' or 'mn -c' (they clean up by
process name); AwafsNet.close() stops exactly what it started."""

import os
import re
import subprocess
import sys
from functools import partial

from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.node import Host, Switch
from mininet.topo import Topo

from testbed.ovs_sandbox import OvsSandbox

SUBNET = "10.77.0"
OFFLOADS = ["tx", "off", "tso", "off", "gso", "off", "gro", "off"]


class EndHost(Host):
    """A Mininet host with IPv6 and offloads off, and the testbed's calls:
    run() (captured, like subprocess.run) and popen() (like
    subprocess.Popen) of a program in its network namespace.  'cgroup' (a
    testbed.hosts.Cgroup) puts the program in that cgroup: it joins between
    fork and exec, so that it is there before mnexec enters the namespace."""

    def __init__(self, name, **params):
        super().__init__(name, **params)
        self.index = int(re.findall(r"\d+", name)[-1])
        self.cpus = None            # All of them, until keep_to().

    @property
    def addr(self):
        return self.IP() or "127.0.0.1"

    def config(self, **params):
        result = super().config(**params)
        self.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
        for intf in self.intfNames():
            if intf != "lo":
                self.cmd("ethtool -K", intf, *OFFLOADS)
        return result

    def argv(self, *cmd):
        """The command line that runs 'cmd' in the host's namespace (and on
        its CPUs: taskset, since a preexec_fn would make subprocess fork
        the whole test process)."""
        cpus = (["taskset", "-c", ",".join(map(str, sorted(self.cpus)))]
                if self.cpus else [])
        return ["mnexec", "-a", str(self.pid), *cpus, *cmd]

    def keep_to(self, cpus, receive=True):
        """Runs the host's programs, started from now on, and, if
        'receive', its interfaces' receive processing (RPS) on 'cpus' (a
        set of CPU numbers) only."""
        self.cpus = set(cpus)
        if not receive:
            return
        mask = f"{sum(1 << c for c in self.cpus):x}"
        self.run_with_sysfs(" && ".join(
            f"echo {mask} > /sys/class/net/{intf}/queues/rx-0/rps_cpus"
            for intf in self.intfNames() if intf != "lo"))

    def placement(self):
        """Where the host runs, as the kernel says: the CPUs its programs
        may use (a set) and, per interface but lo, the CPUs of its
        receive processing (RPS; an empty set: the CPU that delivered the
        frame)."""
        allowed = self.run(sys.executable, "-c", "import os; "
                           "print(*os.sched_getaffinity(0))").stdout
        receive = {}
        for intf in self.intfNames():
            if intf != "lo":
                mask = self.run_with_sysfs(
                    f"cat /sys/class/net/{intf}/queues/rx-0/rps_cpus").stdout
                receive[intf] = cpus_of(mask.strip().replace(",", ""))
        return set(map(int, allowed.split())), receive

    def run_with_sysfs(self, script):
        """Runs shell 'script' with /sys showing the host's network
        namespace (a sysfs mounted in a mount namespace of its own)."""
        return self.run("unshare", "-m", "sh", "-c",
                        "mount --make-rprivate / && umount -l /sys && "
                        "mount -t sysfs sysfs /sys && " + script)

    def run(self, *cmd, check=True, cgroup=None, **kw):
        return subprocess.run(self.argv(*cmd), check=check,
                              capture_output=True, text=True,
                              preexec_fn=cgroup.join if cgroup else None,
                              **kw)

    def popen(self, *cmd, cgroup=None, **kw):
        if cgroup:
            kw["preexec_fn"] = cgroup.join
        return subprocess.Popen(self.argv(*cmd), **kw)


class AwafsSwitch(Switch):
    """A Mininet switch that is a bridge of the sandboxed ovs-vswitchd
    'sandbox'.  Each link becomes a DPDK port named as the link's interface,
    with Mininet's port number as its OpenFlow port.  Forwarding is the
    bridge's default (NORMAL: L2 learning) unless 'flows' (ovs-ofctl
    add-flow arguments) and 'groups' (add-group arguments) replace it."""

    def __init__(self, name, sandbox=None, flows=(), groups=(), **params):
        params["inNamespace"] = False
        super().__init__(name, **params)
        self.sb = sandbox
        self.flows, self.groups = list(flows), list(groups)

    def start(self, controllers):
        self.sb.add_bridge(self.name)
        for port, intf in sorted(self.intfs.items()):
            if intf.name == "lo":           # Mininet's control interface.
                continue
            subprocess.run(["ethtool", "-K", intf.name, *OFFLOADS],
                           check=True, capture_output=True)
            with open(f"/proc/sys/net/ipv6/conf/{intf.name}/disable_ipv6",
                      "w") as f:
                f.write("1")
            self.sb.add_af_packet_port(self.name, intf.name, intf.name, port)
        if self.flows or self.groups:
            # Select groups with a hash selection method need OpenFlow 1.5.
            self.sb.vsctl("set", "bridge", self.name,
                          "protocols=OpenFlow10,OpenFlow15")
            self.sb.ofctl("del-flows", self.name)
            for g in self.groups:
                self.sb.ofctl("-O", "OpenFlow15", "add-group", self.name, g)
            for f in self.flows:
                self.sb.ofctl("-O", "OpenFlow15", "add-flow", self.name, f)

    def stop(self, deleteIntfs=True):
        if self.sb.running():
            self.sb.vsctl("--if-exists", "del-br", self.name)
        super().stop(deleteIntfs)


def cpus_of(mask):
    """The CPU numbers in hexadecimal CPU mask 'mask' ("0x2")."""
    bits = int(mask, 16)
    return {c for c in range(bits.bit_length()) if bits >> c & 1}


def cpus_off_pmd(sb):
    """The CPUs that the PMD threads of switch 'sb' do not poll."""
    return set(range(os.cpu_count())) - cpus_of(sb.pmd_cpu_mask)


def reach(host, addr, tries=3):
    """Pings 'addr' from 'host' until one answer, at most 'tries' pings of
    5 s each: a switch whose port just came up (a tunnel's remote
    ovs-vswitchd) may lose the first.  Raises CalledProcessError if none
    came back."""
    for i in range(tries):
        done = host.run("ping", "-c", "1", "-W", "5", addr,
                        check=i == tries - 1)
        if done.returncode == 0:
            return


class AwafsNet:
    """A Mininet network built from 'topo' whose switches are AwafsSwitch
    bridges of one sandboxed ovs-vswitchd ('sandbox', started here).  After
    start-up every host has reached the first host (ARP learned, ports
    registered); 'prepare(sandbox, net)' runs before that check (a
    tunnel's set-up, testbed/tunnel.py) and may return a switch of its own
    (an OvsSandbox) that close() stops first.  The hosts run on the CPUs
    the PMD threads do not own (EndHost.keep_to()), as a hypervisor's
    guests, unless 'off_pmd_cpus' is false (for comparison: the kernel
    then places them anywhere); so does their receive processing if
    'receive_off_pmd' (the module's comment says when).  'net' is the
    Mininet object; net['h1'] a host."""

    def __init__(self, topo, sandbox=None, static_arp=False, prepare=None,
                 off_pmd_cpus=True, receive_off_pmd=True):
        setLogLevel("warning")
        self.sb = sandbox or OvsSandbox()
        self.net = None
        self.prepared = None
        try:
            self.sb.start()
            self.net = Mininet(topo=topo, controller=None, host=EndHost,
                               switch=partial(AwafsSwitch, sandbox=self.sb),
                               autoSetMacs=True, autoStaticArp=static_arp,
                               build=False)
            self.net.build()
            self.net.start()
            others = cpus_off_pmd(self.sb)
            if others and off_pmd_cpus:
                for h in self.net.hosts:
                    h.keep_to(others, receive=receive_off_pmd)
            if prepare:
                self.prepared = prepare(self.sb, self.net)
            first = self.net.hosts[0]
            for h in self.net.hosts[1:]:
                reach(h, first.addr)
        except BaseException:
            self.close()
            raise

    def __getitem__(self, name):
        return self.net[name]

    @property
    def hosts(self):
        return self.net.hosts

    def close(self):
        # The switches first: they poll the links' interfaces.
        try:
            if self.prepared:
                self.prepared.stop()
        finally:
            try:
                self.sb.stop()
            finally:
                if self.net:
                    self.net.stop()


# ---- topologies -----------------------------------------------------------

class StarTopo(Topo):
    """One switch 'switch' and hosts 'names'; host i of the list has
    interface eth0 and address SUBNET.<i + 1> (never the subnet's own
    address, which a host named n0 would get from its number); the
    switch's port toward it is 'p<number in its name>', OpenFlow port
    i + 1."""

    def build(self, names=("h1", "h2"), switch="br0"):
        sw = self.addSwitch(switch)
        for i, name in enumerate(names):
            n = int(re.findall(r"\d+", name)[-1])
            h = self.addHost(name, ip=f"{SUBNET}.{i + 1}/24")
            self.addLink(h, sw, intfName1="eth0", intfName2=f"p{n}",
                         port2=i + 1)


class LeafSpineTopo(Topo):
    """'leaves' leaf switches with 'per_leaf' hosts each, every leaf linked
    to each of 'spines' spine switches (not oversubscribed when uplinks run
    at the hosts' rate times per_leaf / spines).  Hosts h1..hN (addresses
    SUBNET.i), leaves leaf1.., spines spine1...  Routing is static on IPv4
    destination (with static ARP, so nothing floods around the loops): a
    leaf sends to its own hosts directly and to the others through a select
    group that hashes each connection's 5-tuple onto an uplink (ECMP); a
    spine sends to the destination's leaf."""

    def build(self, leaves=2, spines=2, per_leaf=2):
        def addr(leaf, i):
            """The address of host i of leaf 'leaf' (both from 0)."""
            return f"{SUBNET}.{leaf * per_leaf + i + 1}"

        buckets = ",".join(f"bucket=actions=output:{per_leaf + s + 1}"
                           for s in range(spines))
        group = (f"group_id=1,type=select,selection_method=hash,"
                 f"fields(ip_src,ip_dst,tcp_src,tcp_dst),{buckets}")
        spine_names = [self.addSwitch(f"spine{s + 1}", flows=[
            f"ip,nw_dst={addr(l, i)},actions=output:{l + 1}"
            for l in range(leaves) for i in range(per_leaf)])
            for s in range(spines)]
        for l in range(leaves):
            leaf = self.addSwitch(f"leaf{l + 1}", groups=[group], flows=[
                f"priority=10,ip,nw_dst={addr(l, i)},actions=output:{i + 1}"
                for i in range(per_leaf)] + ["priority=1,ip,actions=group:1"])
            for i in range(per_leaf):
                h = self.addHost(f"h{l * per_leaf + i + 1}",
                                 ip=f"{addr(l, i)}/24")
                self.addLink(h, leaf, intfName1="eth0", port2=i + 1)
            for s, spine in enumerate(spine_names):
                self.addLink(leaf, spine, port1=per_leaf + s + 1,
                             port2=l + 1)

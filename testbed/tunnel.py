"""The micro benchmark's hosts on a tunnelled hypervisor, as OVS-DPDK's
userspace tunnelling guide sets one up
(Documentation/howto/userspace-tunneling.rst): the senders n1, n2 and n3
on the integration bridge int0, whose VXLAN or Geneve port tun0
encapsulates toward a remote endpoint reached through the physical bridge
phy0; phy0's DPDK port p0 (net_af_packet on a veth) is the uplink that
carries the awafs QoS.  Its peer is n0's eth0.

The remote end, in n0's namespace, decapsulates by RFC 6040 for ECN:
- vxlan: the Linux kernel's VXLAN device, which holds the receiver's
  address (a Linux VTEP);
- geneve: this kernel has no Geneve device, so a remote hypervisor as OVN
  runs Geneve: a second ovs-vswitchd (userspace datapath, system ports)
  whose physical bridge rphy1 has eth0 and whose integration bridge rint1
  has the Geneve port and, on its own interface, the receiver's address.

The tenants' MTU is the uplink's less the encapsulation (50 bytes over
IPv4, as OpenStack sets its VMs'), so that no frame exceeds the uplink's
1500 bytes."""

from functools import partial

from mininet.topo import Topo

from testbed.net import SUBNET
from testbed.ovs_sandbox import OvsSandbox
from testbed.traffic import ip

UNDERLAY = "172.31.77"          # phy0 .1, the remote end .2.
VNI = 4242
TENANT_MTU = 1450
KINDS = ("vxlan", "geneve")


class TunnelTopo(Topo):
    """n1..n3 on int0 (ports p1..p3, addresses SUBNET.2..4), n0 (address
    SUBNET.1) alone on phy0 (port p0).  connect() joins them through a
    tunnel."""

    def build(self):
        phy = self.addSwitch("phy0")
        integ = self.addSwitch("int0")
        n0 = self.addHost("n0", ip=f"{SUBNET}.1/24")
        self.addLink(n0, phy, intfName1="eth0", intfName2="p0", port2=1)
        for n in (1, 2, 3):
            h = self.addHost(f"n{n}", ip=f"{SUBNET}.{n + 1}/24")
            self.addLink(h, integ, intfName1="eth0", intfName2=f"p{n}",
                         port2=n)


def _endpoint(sb, ip_cmd, bridge, local, remote, remote_mac):
    """Gives 'bridge''s own interface the tunnel address 'local' (with
    'ip_cmd', which runs 'ip' where that switch runs) and switch 'sb' a
    route and a neighbour entry for 'remote'."""
    ip_cmd("addr", "add", f"{local}/24", "dev", bridge)
    ip_cmd("link", "set", bridge, "up")
    sb.appctl("ovs/route/add", f"{remote}/32", bridge)
    sb.appctl("tnl/arp/set", bridge, remote, remote_mac)


def _tunnel_port(sb, bridge, name, kind, remote):
    sb.vsctl("add-port", bridge, name, "--", "set", "interface", name,
             f"type={kind}", f"options:remote_ip={remote}",
             f"options:key={VNI}", "ofport_request=10")


def _mac(dev, host=None):
    """The MAC address of interface 'dev' (in 'host''s namespace)."""
    args = ["-br", "link", "show", "dev", dev]
    out = (host.run("ip", *args) if host else ip(*args)).stdout
    return out.split()[2]


def _remote_hypervisor(n0, addr, local, remote):
    """The Geneve end in n0 (see above), tunnel address 'local', toward
    'remote'; the receiver's address 'addr' on rint1."""
    rh = OvsSandbox(dpdk=False, netns=n0.argv())
    rh.start()
    try:
        rh.add_bridge("rphy1")
        rh.vsctl("add-port", "rphy1", "eth0")
        n0.run("ip", "addr", "flush", "dev", "eth0")
        _endpoint(rh, partial(n0.run, "ip"), "rphy1", local, remote,
                  _mac("phy0"))
        rh.add_bridge("rint1")
        _tunnel_port(rh, "rint1", "tun1", "geneve", remote)
        rh.vsctl("set", "interface", "rint1", f"mtu_request={TENANT_MTU}")
        for cmd in (["addr", "add", f"{addr}/24", "dev", "rint1"],
                    ["link", "set", "rint1", "up"]):
            n0.run("ip", *cmd)
    except BaseException:
        rh.stop(check=False)
        raise
    return rh


def connect(kind, sb, net):
    """Joins int0's hosts to n0 through a 'kind' tunnel (AwafsNet's
    'prepare': before the reachability check).  Returns the remote
    hypervisor, if any."""
    if kind not in KINDS:
        raise ValueError(f"tunnel kind {kind!r} is not one of {KINDS}")
    n0 = net["n0"]
    local, remote = f"{UNDERLAY}.1", f"{UNDERLAY}.2"
    addr = n0.IP()
    rh = None
    if kind == "geneve":
        rh = _remote_hypervisor(n0, addr, remote, local)
    else:
        for cmd in (["addr", "flush", "dev", "eth0"],
                    ["addr", "add", f"{remote}/24", "dev", "eth0"],
                    ["link", "add", "tun0", "type", "vxlan", "id", str(VNI),
                     "remote", local, "local", remote, "dstport", "4789",
                     "dev", "eth0"],
                    ["addr", "add", f"{addr}/24", "dev", "tun0"],
                    ["link", "set", "tun0", "up"]):
            n0.run("ip", *cmd)
        n0.run("ethtool", "-K", "tun0", "gro", "off")
    try:
        _endpoint(sb, ip, "phy0", local, remote,
                  _mac("rphy1" if rh else "eth0", n0))
        for n in ("n1", "n2", "n3"):
            net[n].run("ip", "link", "set", "eth0", "mtu", str(TENANT_MTU))
        _tunnel_port(sb, "int0", "tun0", kind, remote)
    except BaseException:
        if rh:
            rh.stop(check=False)
        raise
    return rh

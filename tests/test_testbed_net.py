"""The Mininet testbed (testbed/net.py): topologies built through Mininet's
Python API whose switches are bridges of the sandboxed, patched
ovs-vswitchd, every link a net_af_packet DPDK port.  The leaf-spine fabric
of the heterogeneous-traffic experiment carries TCP between every pair of
hosts, spreads connections over both spines, and every one of its egress
ports takes an awafs QoS that sees the traffic."""

import re
import sys
from pathlib import Path

import pytest


RECEIVER = """
import socket, sys
s = socket.socket()
s.bind(("0.0.0.0", 5001))
s.listen(64)
for _ in range(int(sys.argv[1])):
    c, _ = s.accept()
    while c.recv(65536):
        pass
    c.close()
"""

# Started right after the receiver: retries until it listens.
SENDER = """
import socket, sys, time
for port in range(int(sys.argv[2])):
    for attempt in range(100):
        try:
            c = socket.create_connection((sys.argv[1], 5001))
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    c.sendall(b"x" * 200000)
    c.close()
"""


def vswitchd_pids():
    """The machine's ovs-vswitchd processes."""
    pids = set()
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == "ovs-vswitchd":
                pids.add(comm.parent.name)
        except OSError:
            pass            # Gone meanwhile.
    return pids


def test_a_bed_that_fails_to_start_leaves_no_switch(monkeypatch):
    """A bed whose host agent was never built fails to start and leaves no
    switch running (before: its close() failed on the missing agent, and
    the switch it left held the machine-wide bridge names, so every later
    test that starts one failed)."""
    from testbed import senderbed
    from testbed.flowbench import FlowBench

    monkeypatch.setattr(senderbed, "AGENT", "/nonexistent/awafs-host")
    before = vswitchd_pids()
    with pytest.raises(FileNotFoundError):
        FlowBench()
    assert vswitchd_pids() == before


@pytest.fixture(scope="module")
def fabric():
    from testbed.leafspine import LeafSpineBed

    bed = LeafSpineBed()
    yield bed
    bed.close()


def test_switches_are_bridges_of_the_sandboxed_switch(fabric):
    bridges = fabric.sb.vsctl("list-br").split()
    assert sorted(bridges) == ["leaf1", "leaf2", "spine1", "spine2"]
    ports = fabric.sb.vsctl("list-ports", "leaf1").split()
    # Two hosts and two uplinks, each a DPDK port on an af_packet vdev.
    assert len(ports) == 4
    for port in ports:
        assert fabric.sb.vsctl("get", "interface", port,
                               "type").strip() == "dpdk"
        devargs = fabric.sb.vsctl("get", "interface", port,
                                  "options:dpdk-devargs")
        assert f"iface={port}" in devargs and "net_af_packet" in devargs
    assert fabric.downlinks() == {"h1": "leaf1-eth1", "h2": "leaf1-eth2",
                                  "h3": "leaf2-eth1", "h4": "leaf2-eth2"}
    # Uplinks run at rate x hosts per leaf / spines: not oversubscribed.
    assert set(fabric.ports(100).values()) == {100}


def test_hosts_stay_off_the_pmd_cpu(fabric):
    """Every host's programs run on the CPUs the PMD does not poll
    (testbed/net.py), as a hypervisor's guests do, and an evaluation bed
    leaves their receive processing where the kernel does it, in the
    PMD's send call (RPS off): moved to the hosts' CPU, it held up every
    port's sends, and a port at 100 Mbit/s dropped a quarter of what it
    took."""
    from testbed.net import cpus_off_pmd

    others = cpus_off_pmd(fabric.sb)
    assert others, "the PMD polls every CPU"
    for h in fabric.net.hosts:
        cpus, receive = h.placement()
        assert cpus == others, (h, cpus)
        assert receive and all(not c for c in receive.values()), (h, receive)


def test_tcp_between_every_pair_over_both_spines(fabric):
    hosts = fabric.net.hosts
    for h in hosts:
        for peer in hosts:
            if peer is not h:
                assert h.run("ping", "-c", "1", "-W", "2", peer.addr,
                             check=False).returncode == 0, (h, peer)
    # 16 connections h1 -> h3 cross the spines; the select group hashes
    # each 5-tuple onto an uplink.
    h1, h3 = hosts[0], hosts[2]
    n = 16
    server = h3.popen(sys.executable, "-c", RECEIVER, str(n))
    try:
        h1.run(sys.executable, "-c", SENDER, h3.addr, str(n), timeout=60)
        server.wait(30)
    finally:
        if server.poll() is None:
            server.kill()
    # OpenFlow ports 3 and 4 of leaf1 are its uplinks (OVSDB's statistics
    # column lags by seconds; OpenFlow's port stats do not).
    uplinks = [int(re.search(r"tx pkts=(\d+)", fabric.sb.ofctl(
        "dump-ports", "leaf1", str(p))).group(1)) for p in (3, 4)]
    assert all(u > 50 for u in uplinks), uplinks


def test_every_egress_port_takes_awafs(fabric):
    ports = fabric.ports(100000000)
    for port, rate in ports.items():
        # No host agent here: the switch counts each flow's bytes itself.
        fabric.sb.set_awafs(port, queues=2, thresholds=1000, trust="switch",
                            **{"max-rate": rate})
    try:
        h2, h4 = fabric.net.hosts[1], fabric.net.hosts[3]
        server = h4.popen(sys.executable, "-c", RECEIVER, "1")
        h2.run(sys.executable, "-c", SENDER, h4.addr, "1", timeout=60)
        server.wait(30)
        # The data left through h4's downlink: beyond 1000 bytes, queue 1.
        _, _, queues = fabric.sb.qos_show("leaf2-eth2")
        assert int(queues[1]["tx_packets"]) > 100, queues
        for port in ports:
            qtype, details, _ = fabric.sb.qos_show(port)
            assert qtype == "awafs" and "error" not in details, port
    finally:
        for port in ports:
            fabric.sb.vsctl("clear", "port", port, "qos")
        fabric.sb.vsctl("--all", "destroy", "qos")

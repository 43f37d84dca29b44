"""AWAFS on vhost-user ports (issue 14), with dpdk-testpmd as the guest
(testbed/vhost.py): toward the guest through the AWAFS queues, priorities
under shaping, the guest disconnecting and the port deleted with packets
queued, and a guest sending to a physical port with AWAFS."""

import signal

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from tests.test_send_path import HIGH, LOW, frames
from testbed.switch import wait_until
from testbed.traffic import Capture, RawPort, parse_frame
from testbed.vhost import TAP, VhostSwitch


def udp_frames(n):
    return [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
            / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=7, dport=7)
            / (b"x" * 100) for _ in range(n)]


@pytest.fixture(scope="module")
def vswitch():
    vs = VhostSwitch()
    yield vs
    vs.close()


@pytest.fixture
def vs(vswitch):
    """The module's switch with the guest connected, and no QoS on vhu0 or
    p1 after the test."""
    yield vswitch
    for port in ("vhu0", "p1"):
        vswitch.sb.vsctl("clear", "port", port, "qos")
    vswitch.sb.vsctl("--all", "destroy", "qos")
    if vswitch.guest.proc is None:
        vswitch.connect_guest()


def sent_and_held(sb):
    """vhu0's packets sent into the guest's ring, and held by AWAFS."""
    _, details, queues = sb.qos_show("vhu0")
    return (sum(int(q["tx_packets"]) for q in queues.values()),
            int(details["backlog-packets"]))


def to_guest(vs, frame_list, n_expected=None, timeout=10):
    """Sends 'frame_list' into p0; returns (sport, seq) of what the guest
    received, in order."""
    cap = Capture(TAP)
    vs.src.send(frame_list)
    cap.wait_for(n_expected or len(frame_list), timeout)
    return [parse_frame(f)[:2] for _, f in cap.stop()]


def test_traffic_to_the_guest_goes_through_the_awafs_queues(vs):
    sb = vs.sb
    sb.set_awafs("vhu0", queues=2, mode="static", thresholds=10000)
    got = to_guest(vs, frames(10, HIGH) + frames(10, LOW))
    assert len(got) == 20
    qtype, details, queues = sb.qos_show("vhu0")
    assert qtype == "awafs" and "error" not in details
    assert [queues[q]["tx_packets"] for q in (0, 1)] == ["10", "10"]
    assert details["rate-source"] == "none"


def test_high_priority_overtakes_toward_a_shaped_guest(vs):
    """Shaped to 1 Mb/s (8.5 ms a frame): 30 low-priority frames, then 10
    high ones; the high ones reach the guest before the last 20 low ones,
    each flow in order, nothing lost."""
    sb = vs.sb
    sb.set_awafs("vhu0", queues=2, mode="static", thresholds=10000,
                 **{"max-rate": 1000000})
    got = to_guest(vs, frames(30, LOW) + frames(10, HIGH))
    assert len(got) == 40
    low = [seq for sport, seq in got if sport == LOW]
    high = [seq for sport, seq in got if sport == HIGH]
    assert low == sorted(low) and high == sorted(high)
    assert got.index((HIGH, 9)) < got.index((LOW, 10)), got
    _, details, queues = sb.qos_show("vhu0")
    assert all(q["dropped-packets"] == "0" for q in queues.values())


def test_a_guest_that_stops_reading(vs):
    """The guest stops (SIGSTOP): its receive ring fills (about 256 frames)
    and the rest of 300 low-priority frames waits in AWAFS, not dropped,
    while the PMD goes on forwarding to p1.  Then 20 high-priority frames come;
    when the guest reads again they reach it right after what its ring
    held, before the low ones AWAFS held."""
    sb = vs.sb
    sb.set_awafs("vhu0", queues=2, mode="static", thresholds=10000)
    sb.ofctl("add-flow", "br0", "in_port=1,udp,actions=output:2")
    cap = Capture(TAP)
    try:
        vs.guest.proc.send_signal(signal.SIGSTOP)
        vs.src.send(frames(300, LOW))
        assert wait_until(lambda: sum(sent_and_held(sb)) == 300, 5)
        in_ring, held = sent_and_held(sb)
        assert held > 0
        # The PMD is not stuck on the guest: p0 -> p1 still forwards.
        out = Capture(vs.vout.host, match=lambda f: f[23:24] == b"\x11")
        vs.src.send([bytes(udp) for udp in udp_frames(5)])
        assert out.wait_for(5, 5)
        out.stop()
        vs.src.send(frames(20, HIGH))
        assert wait_until(lambda: sb.backlog("vhu0") == held + 20, 5)
    finally:
        vs.guest.proc.send_signal(signal.SIGCONT)
        sb.ofctl("--strict", "del-flows", "br0", "in_port=1,udp")
    cap.wait_for(320, 10)
    got = [parse_frame(f)[:2] for _, f in cap.stop()]
    assert len(got) == 320
    assert got[:in_ring] == [(LOW, seq) for seq in range(in_ring)]
    assert [sport for sport, _ in got[in_ring:in_ring + 20]] == [HIGH] * 20
    _, _, queues = sb.qos_show("vhu0")
    assert all(q["dropped-packets"] == "0" for q in queues.values())


def test_guest_disconnect_and_reconnect_with_packets_queued(vs):
    """Shaped to 80 kb/s, 60 frames wait for the guest; it vanishes
    (SIGKILL): the switch frees them (counted) and the mempool is back to
    its baseline.  The guest comes back: traffic reaches it again."""
    sb = vs.sb
    base = sb.mempool_in_use("p0")
    sb.set_awafs("vhu0", queues=2, mode="static", thresholds=10000,
                 **{"max-rate": 80000})
    vs.src.send(frames(60, LOW))
    assert wait_until(lambda: sb.backlog("vhu0") >= 50, 5)
    vs.guest.stop(signal.SIGKILL)
    assert wait_until(vs.guest_gone, 10)
    assert wait_until(lambda: sb.backlog("vhu0") == 0, 5)
    assert wait_until(lambda: sb.mempool_in_use("p0") == base, 5)
    _, details, _ = sb.qos_show("vhu0")
    assert int(details["flushed-packets"]) >= 50

    # While the guest is away, what comes is dropped by vhost as before.
    vs.src.send(frames(5, HIGH))
    vs.connect_guest()
    sb.update_awafs("vhu0", **{"max-rate": 0})
    got = to_guest(vs, frames(5, HIGH, first=100))
    assert [seq for _, seq in got] == list(range(100, 105))
    assert wait_until(lambda: sb.mempool_in_use("p0") == base, 5)


def test_port_deleted_with_packets_queued(vs):
    from testbed.vhost import add_vhost_port

    sb = vs.sb
    base = sb.mempool_in_use("p0")
    sb.set_awafs("vhu0", queues=2, **{"max-rate": 80000})
    vs.src.send(frames(60, LOW))
    assert wait_until(lambda: sb.backlog("vhu0") >= 50, 5)
    sb.vsctl("del-port", "vhu0")
    try:
        assert wait_until(lambda: sb.mempool_in_use("p0") == base, 5)
    finally:
        add_vhost_port(sb, "vhu0", vs.sock, 3)
        vs.guest.stop()
        vs.connect_guest()
    got = to_guest(vs, frames(3, HIGH))
    assert len(got) == 3


def test_guest_sends_to_a_physical_port_with_awafs(vs):
    """The guest's frames (written to its tap) leave p1 through its AWAFS
    queues."""
    sb = vs.sb
    sb.set_awafs("p1", queues=2, mode="static", thresholds=10000)
    cap = Capture(vs.vout.host)
    guest = RawPort(TAP)
    try:
        guest.send(frames(7, HIGH) + frames(5, LOW))
        cap.wait_for(12, 10)
    finally:
        guest.close()
    assert len(cap.stop()) == 12
    _, _, queues = sb.qos_show("p1")
    assert [queues[q]["tx_packets"] for q in (0, 1)] == ["7", "5"]

"""The queueing send path's promises in the patched OVS-DPDK datapath
(issue 11): every packet accounted for, held packets that leave without new
traffic whichever thread sends them, ECN decided per port or per queue, the
starvation guard, and where frames without the AWAFS option go.

Same two-port switch as tests/test_datapath.py: frames injected on awi0p
enter p0 and leave p1 (AWAFS) to awo0p.  AWAFS_TEST_VSWITCHD runs the tests
against another ovs-vswitchd binary (for example an older build, to see
which promise it breaks)."""

import re
import struct
import time

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

from testbed.switch import bridge_output, wait_until
from testbed.traffic import (WIRE_OVERHEAD, Capture, RawPort, ip,
                             parse_frame, tcp_frame)


LOW, HIGH = 1000, 2000          # Source ports of low/high-priority flows.


def port_counts(sb):
    """(packets the bridge output to p1, p1's tx packets, p1's tx drops)."""
    stats = sb.ofctl("dump-ports", "br0", "2")
    m = re.search(r"tx pkts=(\d+), bytes=\d+, drop=(\d+)", stats)
    return bridge_output(sb), int(m.group(1)), int(m.group(2))


def enqueued(sb, port="p1"):
    """The packets the awafs QoS on 'port' has taken, all queues."""
    return sum(int(q.get("enqueued-packets", 0))
               for q in sb.qos_show(port)[2].values())


def frames(n, sport, first=0, bytes_sent=None, **kw):
    if bytes_sent is None:
        bytes_sent = 0 if sport == HIGH else 20000
    return [tcp_frame(bytes_sent=bytes_sent, sport=sport, seq=first + i, **kw)
            for i in range(n)]


# ---- counters --------------------------------------------------------------

def test_counters_add_up_through_reconfigurations(sw):
    """After traffic, buffer overflow, an in-place reconfiguration, a
    replaced instance and a port that went down, all with packets queued:
    what the bridge sent to the port = transmitted + dropped + still queued,
    for the port; and per queue enqueued = sent + dropped + flushed +
    backlog."""
    sb = sw.sb
    base = sb.mempool_in_use("p0")
    out0, tx0, drop0 = port_counts(sb)
    sb.set_awafs("p1", queues=2, mode="static", thresholds=10000, buffer=50,
                 **{"max-rate": 100000})
    sw.src.send(frames(40, LOW) + frames(40, HIGH))     # 30 or so dropped.
    assert wait_until(lambda: sb.backlog("p1") >= 40, 5)
    sb.update_awafs("p1", **{"max-rate": 200000})        # In place.
    sw.src.send(frames(20, HIGH, 40))
    time.sleep(0.3)
    _, details, queues = sb.qos_show("p1")
    for q in queues.values():
        assert int(q["enqueued-packets"]) == (
            int(q["tx_packets"]) + int(q["dropped-packets"])
            + int(q["flushed-packets"]) + int(q["backlog-packets"])), q

    # A new instance (the thresholds must fit the queues: a configuration
    # that is rejected keeps the old one, and the log check fails it).
    sb.update_awafs("p1", queues=4, thresholds="10000,20000,30000")
    assert sb.qos_show("p1")[1]["queues"] == "4"
    sw.src.send(frames(30, LOW, 100))
    time.sleep(0.3)
    sb.ofctl("mod-port", "br0", "p1", "down")            # Queued: freed.
    assert wait_until(lambda: sb.backlog("p1") == 0, 5)
    assert wait_until(lambda: sb.mempool_in_use("p0") == base, 5)
    _, details, queues = sb.qos_show("p1")
    assert int(details["flushed-packets"]) > 0
    sb.ofctl("mod-port", "br0", "p1", "up")
    sw.src.send(frames(10, HIGH, 200))
    # The bridge's counters reach the 140 frames sent (within a second).
    assert wait_until(lambda: port_counts(sb)[0] - out0 == 140, 10)
    # What is still queued leaves at the shaped rate while the counters are
    # read one by one: read them once it has left (a CI run once counted a
    # packet that went from the backlog to tx between two reads).
    assert wait_until(lambda: sb.backlog("p1") == 0, 10)

    out, tx, drop = port_counts(sb)
    assert (out - out0) == (tx - tx0) + (drop - drop0)
    assert drop - drop0 > 30
    sb.vsctl("clear", "port", "p1", "qos")


def test_ecn_mark_counted_only_for_packets_sent(sw):
    """Marks are decided after the drop decision and counted when sent."""
    sw.sb.set_awafs("p1", queues=2, mode="static", thresholds=10000,
                    buffer=20, **{"ecn-threshold": 5, "max-rate": 1000000})
    got = sw.send_and_capture(frames(60, LOW, tos=2), n_expected=20,
                              timeout=5)
    _, details, queues = sw.sb.qos_show("p1")
    marked = [tos & 3 for sport, _, _, tos in got].count(3)
    assert int(queues[1]["dropped-packets"]) >= 35
    assert int(details["ecn-marks"]) == marked
    assert int(details["ecn-marks"]) <= int(queues[1]["tx_packets"])


# ---- cut-through ----------------------------------------------------------------

def test_cut_through_only_while_nothing_waits(sw):
    """Frames 2 ms apart on a 1 Gb/s port each find nothing queued and go
    straight to the NIC: counted as cut-through and in their queues, having
    waited 0 us.  Shaped to 1 Mb/s (8.5 ms a frame), 30 low-priority frames
    then 10 high ones: past the bucket's burst nothing cuts through, the high
    frames overtake the queued low ones and each flow keeps its order."""
    sb = sw.sb
    sb.set_awafs("p1", queues=2, mode="static", thresholds=10000,
                 **{"max-rate": 10 ** 9})
    cap = Capture(sw.vout.host)
    sw.src.send(frames(10, HIGH) + frames(10, LOW), gap=0.002)
    cap.wait_for(20, 5)
    got = cap.stop()
    assert len(got) == 20
    _, details, queues = sb.qos_show("p1")
    assert details["cut-through"] == "20"
    assert [queues[q]["tx_packets"] for q in (0, 1)] == ["10", "10"]
    assert [queues[q]["sojourn-max-us"] for q in (0, 1)] == ["0", "0"]

    sb.update_awafs("p1", **{"max-rate": 1000000})
    got = sw.send_and_capture(frames(30, LOW, 100) + frames(10, HIGH, 100),
                              timeout=10)
    order = [(sport, seq) for sport, seq, _, _ in got]
    assert len(order) == 40
    low = [seq for sport, seq in order if sport == LOW]
    high = [seq for sport, seq in order if sport == HIGH]
    assert low == sorted(low) and high == sorted(high), order
    # The high frames leave before the last 20 low ones.
    assert order.index((HIGH, 109)) < order.index((LOW, 110)), order
    _, details, _ = sb.qos_show("p1")
    assert int(details["cut-through"]) - 20 <= 3


def test_no_cut_through_while_the_bucket_is_in_debt(sw):
    """A queued packet may start on any budget left, so a shaped port that
    just emptied its queue owes the bucket up to a packet: at 1000 bytes/s
    (3000-byte burst) 20 frames leave it about -150 bytes.  A frame that
    comes right after the queue empties must wait for the refill, not cut
    through."""
    sb = sw.sb
    sb.set_awafs("p1", queues=2, mode="static", thresholds=10000,
                 **{"max-rate": 8000})
    sw.src.send(frames(20, HIGH, payload=100))
    assert wait_until(lambda: sb.backlog("p1") == 1, 5, step=0.005)
    assert wait_until(lambda: sb.backlog("p1") == 0, 5, step=0.005)
    before = int(sb.qos_show("p1")[1]["cut-through"])
    sw.src.send(frames(1, HIGH, first=20, payload=100))
    assert wait_until(lambda: sb.backlog("p1") == 0, 5)
    _, details, queues = sb.qos_show("p1")
    assert queues[0]["tx_packets"] == "21"
    assert int(details["cut-through"]) == before
    assert int(queues[0]["sojourn-max-us"]) > 0


# ---- ECN per port or per queue ------------------------------------------------

@pytest.mark.parametrize("mode", ["port", "queue"])
def test_ecn_mode(sw, mode):
    """30 low-priority frames queued (42 ms each at 200 kb/s); then 4
    ECN-capable high-priority frames.  Per port they find more than 5
    packets ahead and are marked; per queue they find at most 3 in their
    own queue and are not."""
    sw.sb.set_awafs("p1", queues=2, mode="static", thresholds=10000,
                    **{"ecn-threshold": 5, "ecn-mode": mode,
                       "max-rate": 200000})
    cap = Capture(sw.vout.host)
    sw.src.send(frames(30, LOW))
    assert wait_until(lambda: sw.sb.backlog("p1") >= 20, 5)
    sw.src.send(frames(4, HIGH, tos=2))
    cap.wait_for(34, 10)
    got = [parse_frame(f) for _, f in cap.stop()]
    high = [tos & 3 for sport, _, _, tos in got if sport == HIGH]
    assert len(high) == 4
    assert high == ([3] * 4 if mode == "port" else [2] * 4)


# ---- starvation guard --------------------------------------------------------

@pytest.mark.parametrize("max_wait_ms", [0, 40])
def test_starvation_guard(sw, max_wait_ms):
    """A 1 Mb/s port (8.4 ms per frame): 5 high-priority frames empty the
    bucket, then come 3 low-priority frames and 40 more high ones.  Without
    the guard the low frames wait for all 45 (about 380 ms); with
    max-wait-us 40 ms they leave about 40 ms after they came."""
    sw.sb.set_awafs("p1", queues=2, mode="static", thresholds=10000,
                    **{"max-rate": 1000000,
                       "max-wait-us": max_wait_ms * 1000})
    cap = Capture(sw.vout.host)
    sw.src.send(frames(5, HIGH, 100) + frames(3, LOW) + frames(40, HIGH))
    cap.wait_for(48, 10)
    got = [(t, parse_frame(f)[0]) for t, f in cap.stop()]
    assert len(got) == 48
    order = [sport for _, sport in got]
    low_at = [i for i, sport in enumerate(order) if sport == LOW]
    _, _, queues = sw.sb.qos_show("p1")
    if max_wait_ms:
        # Due after 40 ms, behind the first 5 or 6 high frames; 12 with
        # scheduling slack, of the 45.
        assert low_at[-1] <= 12, order
        assert int(queues[1]["aged-packets"]) >= 1
    else:
        assert low_at == [45, 46, 47], order
        assert queues[1]["aged-packets"] == "0"


# ---- frames without the option ------------------------------------------------

def test_headerless_frames_go_to_the_lowest_queue(sw):
    """UDP (or TCP data without the option) cannot take the top queue by
    default; TCP segments without payload (ACKs) still go to queue 0."""
    sw.sb.ofctl("add-flow", "br0", "in_port=1,udp,actions=output:2")
    sw.sb.set_awafs("p1", queues=4)
    udp = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(dport=9)
                / (b"u" * 1000))
    sw.src.send([udp] * 20 + [tcp_frame(payload=1000, seq=i)
                              for i in range(10)]
                + [tcp_frame(payload=0, flags="A", seq=i) for i in range(5)])
    assert wait_until(lambda: enqueued(sw.sb) == 35, 10)
    _, _, queues = sw.sb.qos_show("p1")
    assert queues[3]["enqueued-packets"] == "30"
    assert queues[0]["enqueued-packets"] == "5"
    sw.sb.ofctl("del-flows", "br0", "udp")


def test_frames_that_are_not_ip_take_the_default_queue(sw):
    """ARP and a frame of another EtherType carry no header and are not
    parsed (awafs_frame_may_be_ip()): they go to 'default-queue' and count
    as headerless, mixed in one batch with TCP segments that carry the
    option."""
    sw.sb.ofctl("add-flow", "br0", "in_port=1,arp,actions=output:2")
    sw.sb.ofctl("add-flow", "br0",
                "in_port=1,dl_type=0x88b5,actions=output:2")
    sw.sb.set_awafs("p1", queues=4, **{"default-queue": 1})
    arp = bytes(Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff")
                / ARP(psrc="10.0.0.1", pdst="10.0.0.2"))
    other = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02",
                        type=0x88b5) / (b"x" * 46))
    sw.src.send([arp, other, *frames(1, HIGH)] * 10)
    assert wait_until(lambda: enqueued(sw.sb) == 30, 10)
    _, details, queues = sw.sb.qos_show("p1")
    assert queues[1]["enqueued-packets"] == "20"
    assert queues[0]["enqueued-packets"] == "10"
    assert details["headerless"] == "20" and details["malformed"] == "0"
    sw.sb.ofctl("del-flows", "br0", "arp")
    sw.sb.ofctl("del-flows", "br0", "dl_type=0x88b5")


# ---- VLAN tags -----------------------------------------------------------------

def tagged(frame, *tags):
    """'frame' with 802.1ad/802.1Q tags (TPID, VID) after its MAC
    addresses."""
    return (frame[:12] + b"".join(struct.pack("!HH", tpid, vid)
                                  for tpid, vid in tags) + frame[12:])


def test_vlan_tagged_frames_are_classified(sw):
    """Frames with one tag, two tags (OVS's default vlan-limit parses only
    the first), and a tag the switch strips on the way are classified by
    their option like untagged ones: bytes-sent 0 in queue 0, 50000 in
    queue 1; none is headerless (that would put all in queue 1)."""
    sb = sw.sb
    sb.ofctl("add-flow", "br0",
             "priority=100,in_port=1,dl_vlan=30,actions=strip_vlan,output:2")
    # Double-tagged frames' type is the inner tag's TPID for OVS: no 'tcp'.
    sb.ofctl("add-flow", "br0", "priority=100,in_port=1,dl_vlan=5,"
             "actions=output:2")
    sb.set_awafs("p1", queues=2, mode="static", thresholds=10000)
    q1, qinq = (0x8100, 10), ((0x88A8, 5), (0x8100, 10))
    sw.src.send(
        [tagged(f, q1) for f in frames(5, HIGH, bytes_sent=0)]
        + [tagged(f, *qinq) for f in frames(5, HIGH, 10, bytes_sent=0)]
        + [tagged(f, (0x8100, 30)) for f in frames(5, HIGH, 20,
                                                   bytes_sent=0)]
        + [tagged(f, *qinq) for f in frames(5, LOW, bytes_sent=50000)])
    assert wait_until(lambda: sb.qos_show("p1")[2][1]["tx_packets"] == "5",
                      5)
    _, details, queues = sb.qos_show("p1")
    assert queues[0]["tx_packets"] == "15"
    assert details["headerless"] == "0" and details["malformed"] == "0"
    for vid in (30, 5):
        sb.ofctl("del-flows", "br0", f"dl_vlan={vid}")


# ---- idle and sleeping threads --------------------------------------------------

def pmd_sleep_iterations(sb):
    out = sb.appctl("dpif-netdev/pmd-perf-show")
    m = re.search(r"sleep iterations:\s+(\d+)", out, re.I)
    return int(m.group(1)) if m else 0       # Not shown while 0.


def test_pmd_does_not_sleep_while_packets_are_held(sw):
    """With pmd-maxsleep a PMD that receives little sleeps, up to 10 ms
    here: longer than a 1 ms shaper burst, so held packets would leave
    below the port's rate.  It must not sleep while a port it drains holds
    packets, and sleep again once they are gone."""
    sb = sw.sb
    sb.vsctl("set", "open_vswitch", ".", "other_config:pmd-maxsleep=10000")
    sb.set_awafs("p1", queues=2, **{"max-rate": 16000})    # 2 frames/s.
    sw.src.send(frames(10, HIGH))
    assert wait_until(lambda: sb.backlog("p1") >= 4, 5)
    sb.appctl("dpif-netdev/pmd-stats-clear")
    time.sleep(1.0)
    assert sb.backlog("p1") > 0
    assert pmd_sleep_iterations(sb) == 0
    assert wait_until(lambda: sb.backlog("p1") == 0, 10)
    sb.appctl("dpif-netdev/pmd-stats-clear")
    time.sleep(0.5)
    assert pmd_sleep_iterations(sb) > 0


def test_main_thread_drains_without_new_traffic(sw):
    """Frames from the bridge's internal port are sent by the main thread,
    which sleeps until something wakes it.  20 frames at 1 Mb/s take the
    shaper the time of their wire bits (about 170 ms) to leave; none may
    wait in its queue longer than that and one wakeup of the main loop
    (100 ms), by the switch's own time of each packet in its queue
    ('sojourn-max-us'), not a test thread's clock."""
    sb = sw.sb
    sb.ofctl("add-flow", "br0", "in_port=LOCAL,tcp,actions=output:2")
    sb.set_awafs("p1", queues=2, **{"max-rate": 1000000})
    ip("link", "set", "br0", "up")
    local = RawPort("br0")
    cap = Capture(sw.vout.host)
    sent = frames(20, HIGH)
    try:
        local.send(sent)
        cap.wait_for(20, 5)
    finally:
        local.close()
        got = cap.stop()
        sb.ofctl("del-flows", "br0", "in_port=LOCAL")
    assert len(got) == 20
    _, _, queues = sb.qos_show("p1")
    sojourn_us = max(int(q["sojourn-max-us"]) for q in queues.values())
    shaping_us = sum(len(f) + WIRE_OVERHEAD for f in sent) * 8
    assert 0 < sojourn_us <= shaping_us + 100000, (sojourn_us, shaping_us)


def test_unparseable_frames_gain_nothing_in_switch_mode(sw):
    """trust=switch: a sender whose segments the parser refuses (a second
    AWAFS option: malformed) skips the switch's count; such frames must
    not land in a higher queue than counting would give them."""
    from scapy.layers.inet import TCP
    from testbed.traffic import awafs_option

    sw.sb.set_awafs("p1", queues=4, mode="static",
                    thresholds="1000,2000,3000", trust="switch")
    bad = [bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                 / IP(src="10.0.0.1", dst="10.0.0.2")
                 / TCP(sport=40000, dport=5001, flags="PA",
                       seq=1 + 1000 * i,
                       options=[awafs_option(0), awafs_option(0)])
                 / (b"x" * 1000))
           for i in range(20)]
    sw.src.send(bad)
    assert wait_until(lambda: enqueued(sw.sb) == 20, 10)
    _, details, queues = sw.sb.qos_show("p1")
    assert int(details["malformed"]) == 20
    assert queues[3]["enqueued-packets"] == "20", queues


@pytest.mark.parametrize("ring", [16, 4096])
def test_completion_ring_size(sw, ring):
    """100 completions within one 1 s interval: a 16-slot ring keeps 16 of
    them for the recalculation thread and counts the rest as dropped; the
    default 4096 keeps them all."""
    from testbed.switch import completion_frames

    sw.sb.set_awafs("p1", queues=2, **{"completion-ring-size": ring,
                                       "interval-ms": 1000})
    _, details, _ = sw.sb.qos_show("p1")
    assert details["completion-ring-size"] == str(ring)
    sw.src.send(completion_frames([5000] * 100))
    assert wait_until(lambda: sw.sb.qos_show("p1")[1]["completions"]
                      == "100", 5)
    dropped = int(sw.sb.qos_show("p1")[1]["completions-dropped"])
    assert dropped == (100 - ring if ring < 100 else 0)

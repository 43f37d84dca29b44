"""The queueing send path in set-ups other than tests/test_send_path.py's
switch (issue 11): two PMD threads sharing the one tx queue of an AWAFS
port, per-port mempools, and a port shaped to its link.  Each test runs
its own sandboxed switch (on AWAFS_TEST_VSWITCHD if set)."""

import os
import re
import time

from testbed.ovs_sandbox import REJECTED_QOS, OvsSandbox
from testbed.switch import (null_flood, pmd_cpu_taken, two_pmds_to,
                            wait_until, wire_rate_shares)
from testbed.traffic import (WIRE_OVERHEAD, Capture, RawPort, VethPair,
                             parse_frame, tcp_frame)


VSWITCHD = os.environ.get("AWAFS_TEST_VSWITCHD")    # As in conftest.


def test_two_pmds_sharing_one_tx_queue_keep_order_and_priorities():
    """Two PMD threads (both cores), each polling one ingress port, send
    to one shaped AWAFS port that has one tx queue, so that they share it
    and its one instance (XPS, under its lock): low-priority flows from
    one, high-priority flows from the other.  Nothing is lost or
    duplicated, no flow is reordered, and the high-priority frames
    overtake the queued low ones.  (Each thread on a tx queue and an
    instance of its own: tests/test_txq_instances.py.)"""
    vout = VethPair("awo0")
    try:
        with two_pmds_to(lambda sb: sb.add_af_packet_port(
                "br0", "out", vout.sw, 2)) as (sb, srcs):
            sb.set_awafs("out", queues=2, mode="static", thresholds=10000,
                         **{"max-rate": 5000000})
            out = sb.appctl("dpif-netdev/pmd-rxq-show")
            assert out.count("core_id") == 2, out
            assert sb.qos_show("out")[1]["tx-queues"] == "1"

            cap = Capture(vout.host)
            low = [tcp_frame(bytes_sent=20000 + 1000 * i, sport=1000 + f,
                             seq=i) for i in range(40) for f in range(4)]
            high = [tcp_frame(bytes_sent=1000 * i, sport=2000 + f, seq=i)
                    for i in range(10) for f in range(4)]
            srcs[0].send(low)
            srcs[1].send(high)
            assert cap.wait_for(200, 20)
            time.sleep(0.3)
            got = [parse_frame(f) for _, f in cap.stop()]
            _, details, queues = sb.qos_show("out")
    finally:
        vout.delete()

    keys = [(sport, seq) for sport, seq, _, _ in got]
    assert len(keys) == 200 and len(set(keys)) == 200
    for sport in set(k[0] for k in keys):
        seqs = [seq for s, seq in keys if s == sport]
        assert seqs == sorted(seqs), (sport, seqs)
    order = [sport // 1000 for sport, _ in keys]
    last_high = len(order) - 1 - order[::-1].index(2)
    # 160 low frames take 270 ms at 5 Mb/s; the high ones come within a
    # few ms of them and leave ahead of nearly all.
    assert order[:last_high].count(1) <= 40, order
    assert queues[0]["tx_packets"] == "40"
    assert queues[1]["tx_packets"] == "160"


def test_buffers_bounded_by_per_port_mempools():
    """With per-port mempools (about 20000 mbufs each), the awafs buffers of
    all ports together must fit in half of the smallest: 65536 is rejected
    with the numbers, and a second port cannot take what the first holds.
    An awafs port at its largest accepted buffer, overloaded, does not stop
    reception on the port that feeds it."""
    with OvsSandbox(extra_config={"per-port-memory": "true"},
                    vswitchd=VSWITCHD) as sb:
        sb.allow_log(REJECTED_QOS)
        sb.add_bridge()
        sb.add_dpdk_port("br0", "p0", "net_null0", 1)
        sb.add_dpdk_port("br0", "p1", "net_null1,no-rx=1", 2)
        sb.add_dpdk_port("br0", "p2", "net_null2,no-rx=1", 3)
        sb.ofctl("add-flow", "br0", "in_port=1,actions=output:2")

        sb.set_awafs("p1", buffer=65536, **{"max-rate": 1000000})
        _, details, _ = sb.qos_show("p1")
        assert "do not fit in the" in details.get("error", ""), details
        spare = int(details["error"].split(" mbufs")[0].split()[-1])
        assert 5000 < spare < 32768

        sb.set_awafs("p1", buffer=spare - 100, **{"max-rate": 1000000})
        _, details, _ = sb.qos_show("p1")
        assert "error" not in details, details
        sb.set_awafs("p2", buffer=200)
        _, details, _ = sb.qos_show("p2")
        assert "other awafs ports may hold" in details.get("error", "")

        assert wait_until(lambda: int(sb.qos_show("p1")[1]
                                      ["backlog-packets"]) >= spare - 200,
                          10)

        def rx():
            stats = sb.ofctl("dump-ports", "br0", "1")
            return int(re.search(r"rx pkts=(\d+)", stats).group(1))

        before = rx()
        time.sleep(1)
        assert rx() > before + 100000


def test_unshaped_port_is_shaped_to_its_link():
    """No max-rate: the port is shaped to its link (net_null says 10 Gb/s).
    More arrives than the link carries (1518-byte frames from a net_null
    source), so the AWAFS queues hold the excess, and the port hands the
    "NIC" the link's rate of wire within 2 % (testbed.switch.
    wire_rate_shares()), where an unshaped port would hand it everything
    (net_null takes any rate).  High-priority frames sent meanwhile
    overtake the backlog: they wait less than half as long as the low
    queue's packets.  (That a real NIC's ring then holds at most the
    shaper's burst cannot be seen here: no PMD on this machine drains its
    ring at a link's rate.)"""
    size, link = 1518, 10 ** 10
    vin = VethPair("awi0")
    src = None
    try:
        with OvsSandbox(vswitchd=VSWITCHD) as sb:
            # copy=1: zeros, not the stale data of recycled mbufs (frames
            # of the other port, which would parse as theirs).
            null_flood(sb, f"net_null0,size={size},copy=1")
            sb.add_af_packet_port("br0", "hp", vin.sw, 3)
            sb.ofctl("add-flow", "br0", "in_port=3,tcp,actions=output:2")
            sb.set_awafs("p1", queues=2, mode="static", thresholds=10000)
            _, details, _ = sb.qos_show("p1")
            assert details["rate-source"] == "link", details
            assert details["rate"] == str(link)

            # Headerless null frames: the lowest queue, backlogged.
            assert wait_until(lambda: int(sb.qos_show("p1")[2][1]
                                          ["dropped-packets"]) > 1000, 10)
            shares = wire_rate_shares(sb, 2, link, size)
            src = RawPort(vin.host)
            for i in range(20):
                src.send([tcp_frame(bytes_sent=0, sport=2000, seq=10 * i + j)
                          for j in range(10)])
                time.sleep(0.01)
            assert wait_until(lambda: sb.qos_show("p1")[2][0]
                              ["tx_packets"] == "200", 5)
            _, details, queues = sb.qos_show("p1")
    finally:
        if src:
            src.close()
        vin.delete()
    assert max(shares) <= 1.02 and max(shares) >= 0.98, shares
    assert int(details["backlog-packets"]) > 500
    assert queues[0]["dropped-packets"] == "0"
    high, low = (int(queues[q]["sojourn-max-us"]) for q in (0, 1))
    # The low queue: a full buffer (1024 frames) at 10 Gb/s is 1.26 ms.
    assert low >= 1024 * (size + WIRE_OVERHEAD) * 8 / link * 1e6 * 0.9, \
        queues
    assert high < low / 2, queues


def test_link_burst_covers_a_pmd_that_stays_away():
    """Shaped to its link, a port's burst grows to how long its PMD left
    packets held between two visits (within 50 us and 1 ms), so that a long
    PMD iteration does not idle the link (the arithmetic:
    tests/unit/test-sched.c, test_burst_covers_the_gap), and shrinks back
    once the visits are frequent again.  The long visits: a busy process on
    the PMD's CPU, with which the kernel makes the PMD take turns of
    milliseconds."""
    size = 1518
    with OvsSandbox(vswitchd=VSWITCHD) as sb:
        null_flood(sb, f"net_null0,size={size},copy=1")
        sb.set_awafs("p1", queues=2, mode="static", thresholds=10000,
                     **{"interval-ms": 100})

        def show():
            return sb.qos_show("p1")[1]

        assert wait_until(lambda: int(sb.qos_show("p1")[2][1]
                                      ["dropped-packets"]) > 1000, 10)
        assert 50 <= int(show()["link-burst-us"]) <= 1000
        with pmd_cpu_taken(sb):
            assert wait_until(lambda: show()["link-burst-us"] == "1000", 10,
                              step=0.2), show()
            assert int(show()["held-gap-max-us"]) >= 1000
        # Two rounds without a wait of a millisecond: a slow machine's own
        # hiccups come now and then, so allow it 30 s.
        assert wait_until(lambda: int(show()["link-burst-us"]) < 1000, 30,
                          step=0.2), show()
        # With max-rate the burst is max-rate's millisecond.
        sb.set_awafs("p1", queues=2, mode="static", thresholds=10000,
                     **{"max-rate": 10 ** 9})
        assert "link-burst-us" not in show()

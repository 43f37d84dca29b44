"""AWAFS over OpenFlow in the patched switch (issue 13, docs/openflow.md):
the NXST_AWAFS message as 'ovs-ofctl dump-awafs' prints it, against
'ovs-appctl qos/show'; and set_queue pinning a flow to an AWAFS queue.

Same two-port switch as tests/test_datapath.py: frames injected on awi0p
enter p0 and leave p1 to awo0p."""


import pytest

from testbed.switch import completion_frames, wait_until
from testbed.traffic import tcp_frame
from testbed.workload import weyl_samples


MICRO = [(10000, 0.0), (10000, 0.8), (1000000, 0.8), (1000000, 1.0)]
LOW, HIGH = 1000, 2000          # Source ports of low/high-priority flows.
# Change between two reads of an idle port (held-gap-max-us: for two
# recalculation rounds after the last packet held).
MOVING = {"thresholds-age-ms", "held-gap-max-us"}


def test_dump_awafs_agrees_with_qos_show(sw):
    """After 400 completions, every key the message carries is in
    qos/show with the same value, for the port and each queue, in
    OpenFlow 1.0 and 1.3; the thresholds are the learned ones."""
    sb = sw.sb
    sb.vsctl("set", "bridge", "br0", "protocols=OpenFlow10,OpenFlow13")
    sb.set_awafs("p1", queues=3, thresholds="5000,500000",
                 percentiles="12.5,90", **{"window-ms": 5000})
    sizes = weyl_samples(MICRO, 400)
    sw.play(completion_frames(sizes), rate=1000)
    assert wait_until(
        lambda: sb.qos_show("p1")[1]["window-samples"] == "400", 5)
    assert wait_until(
        lambda: sb.qos_show("p1")[1]["thresholds-samples"] == "400", 5)
    _, details, queues = sb.qos_show("p1")
    # The window's sizes by power of 2, to the last one that holds any
    # (20 values: more than a threshold list's 7).
    log2 = [0] * max(s.bit_length() for s in sizes)
    for s in sizes:
        log2[s.bit_length() - 1] += 1
    assert details["window-histogram"] == ",".join(map(str, log2))
    for version in ("OpenFlow10", "OpenFlow13"):
        ports = sb.dump_awafs("br0", version=version)
        assert list(ports) == ["2"]
        port, port_queues = ports["2"]
        assert len(port) > 40
        for key, value in port.items():
            if key not in MOVING:
                assert details[key] == value, key
        assert port["percentiles"] == "12.5,90"
        assert port["current-thresholds"] == details["current-thresholds"]
        assert port["current-thresholds"] != "5000,500000"
        assert sorted(port_queues) == [0, 1, 2]
        for q, kv in port_queues.items():
            assert kv == queues[q]
        assert sum(int(kv["tx_packets"]) for kv in port_queues.values()) \
            == 400


def test_dump_awafs_one_port_and_ports_without_awafs(sw):
    """A port without an awafs QoS gives an empty reply; a port that does
    not exist gives OFPBRC_BAD_PORT."""
    sb = sw.sb
    assert sb.dump_awafs("br0") == {}
    sb.set_awafs("p1", queues=2, thresholds=10000, percentiles=10)
    assert list(sb.dump_awafs("br0", "p1")) == ["2"]
    assert sb.dump_awafs("br0", "p0") == {}
    out = sb.ofctl("-O", "OpenFlow13", "dump-awafs", "br0", "99")
    assert "OFPBRC_BAD_PORT" in out


@pytest.fixture
def flows(sw):
    """Lets a test add flows; puts back p0 -> p1 alone afterwards.  The
    datapath's cached flows are purged each time, not left to the
    revalidators' next run."""
    def add(*specs):
        for spec in specs:
            sw.sb.ofctl("add-flow", "br0", spec)
        sw.sb.appctl("revalidator/purge")

    yield add
    sw.sb.ofctl("del-flows", "br0")
    add("in_port=1,tcp,actions=output:2")


def test_set_queue_pins_a_flow(sw, flows):
    """A flow that has sent 20 kB (queue 1 by its bytes) pinned with
    set_queue:0 leaves from queue 0; one that has sent nothing (queue 0)
    pinned with set_queue:7 leaves from the last queue; an unpinned flow
    is classified as usual.  Pinned packets are counted."""
    sb = sw.sb
    sb.set_awafs("p1", queues=2, mode="static", thresholds=10000)
    flows(f"priority=40000,in_port=1,tcp,tp_src={LOW},"
          "actions=set_queue:0,output:2",
          f"priority=40000,in_port=1,tcp,tp_src={HIGH},"
          "actions=set_queue:7,output:2")
    frames = ([tcp_frame(bytes_sent=20000, sport=LOW, seq=i)
               for i in range(10)]
              + [tcp_frame(bytes_sent=0, sport=HIGH, seq=i)
                 for i in range(6)]
              + [tcp_frame(bytes_sent=20000, sport=3000, seq=i)
                 for i in range(3)])
    got = sw.send_and_capture(frames)
    assert len(got) == 19
    _, details, queues = sb.qos_show("p1")
    assert [queues[q]["tx_packets"] for q in (0, 1)] == ["10", "9"]
    assert [queues[q]["pinned-packets"] for q in (0, 1)] == ["10", "6"]
    assert details["pinned-packets"] == "16"


def test_set_queue_still_reaches_the_trtcm_policer(sw, flows):
    """set_queue:N now sets skb_priority N + 1 (so that set_queue:0 is
    seen): the trTCM policer still finds queue N.  Queue 1 passes one
    frame's worth, queue 0 (the default) everything."""
    sb = sw.sb
    sb.vsctl("set", "port", "p1", "qos=@q", "--",
             "--id=@q", "create", "qos", "type=trtcm-policer",
             "other_config:cir=1000000000", "other_config:cbs=1000000",
             "queues=0=@q0,1=@q1", "--",
             "--id=@q0", "create", "queue", "other_config:cir=1000000000",
             "other_config:cbs=1000000", "--",
             "--id=@q1", "create", "queue", "other_config:cir=1",
             "other_config:cbs=200", "other_config:eir=1",
             "other_config:ebs=1")
    flows(f"priority=40000,in_port=1,tcp,tp_src={LOW},"
          "actions=set_queue:1,output:2",
          f"priority=40000,in_port=1,tcp,tp_src={HIGH},"
          "actions=set_queue:0,output:2")
    got = sw.send_and_capture(
        [tcp_frame(sport=HIGH, seq=i) for i in range(10)]
        + [tcp_frame(sport=LOW, seq=i) for i in range(10)],
        n_expected=10, timeout=5)
    sports = [sport for sport, _, _, _ in got]
    assert sports.count(HIGH) == 10
    assert sports.count(LOW) <= 1

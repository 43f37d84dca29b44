"""Every testbed run names and proves its transport (testbed/transport.py):
the bed sets the congestion control of every host it starts, and a run
reads it back from the live sockets and fails on one that differs.  The
kernel's default here is bbr, which every namespace inherits, so a run that
asked for cubic and set nothing would run BBR."""

import sys
import time

import pytest

from testbed import transport
from testbed.flowbench import FlowBench


RATE = 100000000
FLOWS = 60


@pytest.fixture(scope="module")
def sizes(tmp_path_factory):
    """Responses of 20-200 kB: long enough to be seen on the wire."""
    path = tmp_path_factory.mktemp("cdf") / "transport.cdf"
    path.write_text("20000 0\n200000 1\n")
    return path


def measure_with(transport_name, sizes):
    bench = FlowBench(transport=transport_name)
    try:
        rows, _ = bench.measure({"queues": 2, "mode": "static",
                                 "thresholds": 50000},
                                [(sizes, FLOWS)], 0.5 * RATE, RATE)
        assert len(rows) == FLOWS
        # What the bed set, on every host.
        defaults = {h.name: h.run("sysctl", "-n",
                                  "net.ipv4.tcp_congestion_control")
                    .stdout.strip() for h in bench.net.hosts}
        return bench.transport_record, defaults, bench.port_stats
    finally:
        bench.close()


@pytest.mark.parametrize("name", ["cubic", "bbr"])
def test_a_run_runs_the_congestion_control_it_names(sizes, name):
    allowed = transport.ALLOWED.read_text()
    record, defaults, stats = measure_with(name, sizes)
    assert record["transport"] == name
    assert set(defaults.values()) == {name}
    # The servers (n1..n3, the responses' senders) and the client (n0)
    # were seen, each running only 'name'.
    seen = record["sockets_seen"]
    assert "n0" in seen and {"n1", "n2", "n3"} & set(seen)
    assert all(set(ccs) == {name} for ccs in seen.values()), seen
    assert not record["ecn"] and stats["ecn_marks"] == 0
    # The allowed list is as it was.
    assert transport.ALLOWED.read_text() == allowed


def test_dctcp_runs_awafs_dctcp_with_ecn(sizes):
    record, defaults, stats = measure_with("dctcp", sizes)
    assert set(defaults.values()) == {"awafs_dctcp"}
    assert all(set(ccs) == {"awafs_dctcp"}
               for ccs in record["sockets_seen"].values())
    assert record["ecn"]
    assert stats["details"]["ecn-threshold"] != "0"


def test_an_unavailable_transport_fails_with_a_clear_message():
    with pytest.raises(transport.TransportError) as e:
        FlowBench(transport="vegas")
    assert "vegas" in str(e.value)
    assert "available: " in str(e.value)


def test_a_socket_on_another_transport_fails_the_run(hosts):
    """A connection that runs bbr where the run asked for cubic is named in
    the failure."""
    h1, h2 = hosts.h1, hosts.h2
    code = ("import socket, sys, time\n"
            "s = socket.socket()\n"
            "s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, "
            "sys.argv[2].encode())\n"
            "s.connect((sys.argv[1], 5301))\n"
            "time.sleep(30)\n")
    server = h2.popen(sys.executable, "-c",
                      "import socket, time\n"
                      "l = socket.socket()\n"
                      "l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                      "l.bind(('0.0.0.0', 5301)); l.listen()\n"
                      "c, _ = l.accept(); time.sleep(30)\n")
    client = None
    try:
        for _ in range(50):
            if h2.run("ss", "-ltnH", "sport", "= :5301").stdout.strip():
                break
            time.sleep(0.1)
        client = h1.popen(sys.executable, "-c", code, h2.addr, "bbr")
        for _ in range(50):
            if any(cc for _, _, cc in transport.connections(h1)):
                break
            time.sleep(0.1)
        conns = transport.connections(h1)
        assert [cc for _, peer, cc in conns
                if peer.endswith(":5301")] == ["bbr"]
        proof = transport.Proof("cubic", [h1], {})
        with pytest.raises(transport.TransportError) as e:
            proof.check()
        assert "runs bbr, not cubic" in str(e.value)
        assert proof.record()["transport"] == "cubic"
        transport.Proof("bbr", [h1], {}).check()
    finally:
        for p in (client, server):
            if p:
                p.terminate()
                p.wait()


def test_no_connection_seen_is_no_proof(hosts):
    with pytest.raises(transport.TransportError, match="not proved"):
        transport.Proof("cubic", [hosts.h1], {}).require_seen()


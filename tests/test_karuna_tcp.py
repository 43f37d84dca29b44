"""Karuna's mix-flow scheduling (issue 17) on real TCP: flowgen servers set
their sockets' marks as a Karuna-aware application does (n1: a deadline,
n2: the response's size, n3: nothing), the host agent copies the marks into
the AWAFS option (attach --karuna), and the awafs port with karuna=on puts
each kind of flow where Karuna does: deadline flows in queue 0, flows of
known size by their size, flows of unknown size through the sieve.  Aging:
a long flow of unknown size starved below a load of short flows restarts at
the top of the sieve after its timeouts and finishes while the load goes
on."""

import socket

import pytest

from testbed.flowbench import PORT, FlowBench, base_rtt_us, client_argv
from testbed.flowgen import (SO_MARK, karuna_deadline_ms, karuna_mark,
                             karuna_spec, set_mark)
from testbed.senderbed import AWAFS_PORT, run_clients


RATE = 20000000


@pytest.fixture(scope="module")
def bench():
    b = FlowBench(transport="cubic", karuna=["deadline:20", "size", None])
    yield b
    b.close()


def test_deadline_specs():
    """A response's deadline: fixed, or its time at a rate with a floor,
    within the mark's 12 bits; bad specs are refused."""
    def deadline(spec, size):
        return karuna_deadline_ms(karuna_spec(spec), size)

    assert deadline("size", 5000) == 0
    assert deadline("deadline:20", 10 ** 7) == 20
    assert deadline("deadline:10:25000000", 1000) == 10
    assert deadline("deadline:10:25000000", 100000) == 32
    assert deadline("deadline:10:25000000", 3 * 10 ** 7) == 4095
    assert karuna_mark(32, 100000) == 32 << 20 | 98
    # The largest deadline does not fit a C int: set as the kernel's u32.
    with socket.socket() as s:
        set_mark(s, karuna_mark(4095, 10 ** 6))
        assert s.getsockopt(socket.SOL_SOCKET, SO_MARK) & 0xffffffff == \
            4095 << 20 | 977
    for bad in ("deadline:0", "deadline:5000", "deadline:5:0",
                "deadline:5:x", "dl:5"):
        with pytest.raises(Exception, match="deadline:MS:BPS"):
            karuna_spec(bad)


def cdf(tmp_path, name, lines):
    path = tmp_path / f"{name}.cdf"
    path.write_text(lines)
    return str(path)


def test_each_flow_type_goes_to_its_queues(bench, tmp_path):
    """Sizes of 10-300 kB: every known size is past the size thresholds
    (queue 3), the sieve's thresholds are past every flow (queue 1), and
    frames without the option but with data go to queue 2: so queue 1
    holds exactly the unknown sizes' packets, queue 3 the known sizes',
    queue 2 only the hosts' few ARP and neighbour discovery frames, and
    queue 0 the deadline flows' (and the servers' bare ACKs)."""
    sizes = cdf(tmp_path, "sizes", "10000 0\n300000 1\n")
    rows, _ = bench.measure(
        {"queues": 4, "karuna": "on", "mode": "static",
         "thresholds": "10000000,20000000", "size-thresholds": "1000,2000",
         "default-queue": 2, "window-ms": 60000}, [(sizes, 90)],
        0.5 * RATE, RATE)
    assert len(rows) == 90
    details, queues = bench.port_stats["details"], bench.port_stats["queues"]
    enq = {q: int(queues[q]["enqueued-packets"]) for q in range(4)}
    deadline = int(details["deadline-packets"])
    sized = int(details["sized-packets"])
    unknown = int(details["unknown-size-packets"])
    assert min(deadline, sized, unknown) > 100, details
    assert enq[1] == unknown and enq[3] == sized, enq
    assert enq[2] <= min(20, int(details["headerless"])), enq
    assert enq[0] >= deadline
    assert int(details["karuna-oversize"]) == 0
    # Each class learns from its own completions only: the window of the
    # known sizes holds n2's responses, the sieve's n3's, neither n1's --
    # give or take the last reports, still in flight when the client ends.
    n1, n2, n3 = (f"{h.addr}:7000" for h in bench.senders)
    by_server = {s: sum(r["server"] == s for r in rows) for s in (n1, n2, n3)}
    sized_window = int(details["size-window-samples"])
    sieve_window = int(details["window-samples"])
    assert abs(sized_window - by_server[n2]) <= 3, (sized_window, by_server)
    assert abs(sieve_window - by_server[n3]) <= 3, (sieve_window, by_server)
    assert sized_window + sieve_window <= 93 - by_server[n1]


def run_starved(bench, tmp_path, aging):
    """A 200 kB flow of unknown size from n3 while two 8 MB flows of known
    size from n2 keep queue 1 busy for several seconds: past the sieve's
    100 kB threshold the 200 kB flow is in queue 2, which queue 1 starves.
    Returns when the 200 kB flow and when the long flows ended (s after
    the clients started) and the port's details."""
    bulk = cdf(tmp_path, "bulk", "8000000 0\n8000000 1\n")
    long_ = cdf(tmp_path, "long", "200000 0\n200000 1\n")
    n0 = bench.receiver
    _, n2, n3 = bench.senders
    base = base_rtt_us(n0, [f"{h.addr}:{PORT}" for h in bench.senders])
    outs = [bench.www / f"starve-{aging}-{i}.csv" for i in (0, 1)]
    # Both at once (an offered load far above the rate).
    load = client_argv([f"{n2.addr}:{PORT}"], [(bulk, 2)], 1e12, RATE, base,
                       outs[0], per_flow=True)
    # One flow at a load whose mean arrival is 1 s in.
    victim = client_argv([f"{n3.addr}:{PORT}"], [(long_, 1)], 1600000, RATE,
                         base, outs[1], seed=3, first_id=100000)
    qos = {"queues": 3, "karuna": "on", "mode": "static",
           "thresholds": 100000, "size-thresholds": 100000000,
           "trust": "switch", "aging": aging,
           "aging-min-timeouts": 2, "aging-max-timeouts": 2,
           "max-rate": RATE, "buffer": 64}
    rows, _, stats = run_clients(bench.sb, {AWAFS_PORT: qos},
                                 [(n0, load, outs[0]), (n0, victim, outs[1])],
                                 0.5, bench.proof())
    def end(row):
        return float(row["start_s"]) + float(row["fct_us"]) / 1e6

    (long_row,) = rows[1]
    return end(long_row), max(map(end, rows[0])), stats[AWAFS_PORT]["details"]


def test_aging_moves_a_starved_flow(bench, tmp_path):
    end_off, load_end, details = run_starved(bench, tmp_path, "off")
    assert int(details["timeouts"]) > 0
    assert int(details["aged-flows"]) == 0
    # Starved until the long flows end.
    assert end_off > 0.9 * load_end, (end_off, load_end)

    end_on, load_end, details = run_starved(bench, tmp_path, "on")
    assert int(details["aged-flows"]) >= 1
    # Restarted at the top of the sieve after two timeouts: done while
    # they go on.
    assert end_on < 0.5 * load_end, (end_on, load_end)

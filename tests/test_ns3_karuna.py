"""Karuna's mode of the core on ns-3 (awafs-ns3 --karuna on, seed 003):
the ports reserve queue 0 for deadline flows, place a flow of known size
by its size and the size thresholds {beta}, sieve the others by bytes
sent and {alpha}, and learn each set from its own flows' completions, as
the switch's karuna=on does (docs/design.md, "Karuna").  The senders tag
their bytes with each flow's Karuna word (--deadline-share,
--sized-share), which the ports read from the option, with trust=host:
under trust=switch a deadline is a claim the switch refuses.

What the runs must show follows from the configuration: the micro mix
(80 % 10 kB, 20 % 1000 kB) on one leaf, so that each flow crosses one
switch port, without drops, so that every segment is sent once."""

import math
import subprocess

import pytest

from sim.ns3_eval import NS3, read_csv, read_flows, run_ns3

FLOWS = 300
MSS = 1448
SHORT, LONG = 10000, 1000000
ALPHA = BETA = (20000, 2000000)
# The micro mix's 10 kB as the histogram window reports it.
LEARNED = 10048
INITIAL = 1000000
ONE_LEAF = ["--topology", "leaf-spine", "--leaves", 1, "--hosts-per-leaf",
            4, "--spines", 1, "--rate", "1G", "--transport", "dctcp"]
KARUNA = ["--karuna", "on", "--trust", "host", "--queues", 4]
TYPES = ["--deadline-share", 0.34, "--sized-share", 0.33]
DEADLINE, SIZED, UNKNOWN = 1, 2, 3


def segments(size):
    return math.ceil(size / MSS)


@pytest.fixture(scope="module")
def static(tmp_path_factory):
    """Karuna with the static thresholds ALPHA and BETA on one leaf, with
    each flow's packets in each queue (--waits-csv).  Its ports mark by
    each queue's backlog, and the hosts' NICs run Karuna too: with marks
    by the port's backlog, queue 0's DCTCP flows slow down for the packets
    queued below them (the long deadline flows took 55 ms against 31 for
    the long flows of unknown size), and in a FIFO NIC they wait behind
    their sender's other flows."""
    if not NS3.exists():
        pytest.fail(f"{NS3} not built (make ns3)")
    out = tmp_path_factory.mktemp("karuna")
    r = run_ns3("--flows", FLOWS, *ONE_LEAF, *KARUNA, *TYPES,
                "--scheme", "static",
                "--thresholds", ",".join(map(str, ALPHA)),
                "--size-thresholds", ",".join(map(str, BETA)),
                "--ecn-mode", "queue", "--nic-queue", "port",
                "--waits-csv", out / "waits.csv",
                flows_csv=out / "flows.csv")
    r["waits"] = {int(w["id"]): w for w in read_csv(out / "waits.csv")}
    return r


def data_packets(w, q):
    return int(w[f"q{q}_packets"])


def test_every_flow_completes_without_a_drop(static):
    assert static["completed"] == FLOWS
    assert static["drops"] == 0 and static["host_drops"] == 0
    types = [f["type"] for f in static["rows"]]
    # Each type has flows of both sizes.
    for t in (DEADLINE, SIZED, UNKNOWN):
        assert {f["size"] for f in static["rows"] if f["type"] == t} \
            == {SHORT, LONG}
    assert types.count(DEADLINE) > 50 and types.count(SIZED) > 50


def test_each_type_waits_in_its_queue(static):
    """A deadline flow's every packet in queue 0; a flow of known size
    all its data in 1 + its size's queue by {beta} (10 kB in 1, 1000 kB in
    2), from its first byte; a flow of unknown size its first 20000 bytes
    in queue 1, the rest in 2.  A non-deadline flow's segments without
    payload (SYN, FIN, their ACKs) take queue 0 within their budget."""
    for f in static["rows"]:
        w = static["waits"][f["id"]]
        n = segments(f["size"])
        if f["type"] == DEADLINE:
            assert data_packets(w, 0) == int(w["nic_packets"]) > n, f
            continue
        top = 1 if f["size"] == SHORT else 2
        byte_free = data_packets(w, 0)
        assert 2 <= byte_free <= 4, f
        if f["type"] == SIZED:
            assert data_packets(w, top) == n, f
            assert data_packets(w, 3 - top) == 0, f
        elif f["size"] == SHORT:
            assert data_packets(w, 1) == n and data_packets(w, 2) == 0, f
        else:
            assert data_packets(w, 1) == segments(ALPHA[0]), f
            assert data_packets(w, 2) == n - segments(ALPHA[0]), f
        assert data_packets(w, 3) == 0, f


def test_the_ports_count_each_segment_by_its_type(static):
    """karuna_packets: the segments with payload the ports placed as
    deadline, sized and unknown -- each flow's once, by its word."""
    want = [sum(segments(f["size"]) for f in static["rows"]
                if f["type"] == t) for t in (DEADLINE, SIZED, UNKNOWN)]
    assert static["karuna_packets"] == want
    assert static["karuna_oversize"] == 0


def test_deadline_flows_finish_first(static):
    """Queue 0 above all: the long deadline flows finish well before the
    long flows of unknown size, which the sieve demotes below them."""
    def mean(t):
        fcts = [f["fct_ms"] for f in static["rows"]
                if f["type"] == t and f["size"] == LONG]
        return sum(fcts) / len(fcts)
    assert mean(DEADLINE) < 0.5 * mean(UNKNOWN)
    assert static["deadline_flows"] == sum(
        f["type"] == DEADLINE for f in static["rows"])
    assert static["deadline_missed"] == sum(
        f["type"] == DEADLINE and f["fct_ms"] > f["deadline_ms"]
        for f in static["rows"])


def test_a_deadline_is_its_bytes_at_a_quarter_of_the_rate(static):
    """--deadline-ms 5 and the default --deadline-rate, a quarter of the
    1 Gbit/s links: 5 ms for 10 kB, 32 ms for 1000 kB."""
    for f in static["rows"]:
        want = {SHORT: 5, LONG: 32}[f["size"]] if f["type"] == DEADLINE else 0
        assert f["deadline_ms"] == want, f


def test_types_change_no_flow(static, tmp_path):
    """The types come from a stream of their own: the seed's flows (sizes,
    arrivals, peers) are those of a run without them."""
    plain = run_ns3("--flows", FLOWS, *ONE_LEAF, flows_csv=tmp_path / "f.csv")
    keys = ("id", "size", "start_s", "sender", "receiver")
    assert [tuple(f[k] for k in keys) for f in plain["rows"]] \
        == [tuple(f[k] for k in keys) for f in static["rows"]]


@pytest.mark.parametrize("shares,learns", [
    # Only flows of known size: {beta} learns the 10 kB, {alpha} keeps
    # its initial thresholds.
    (["--sized-share", 1], "beta"),
    # Deadline flows and flows of unknown size: {alpha} learns, {beta}
    # sees no completion.
    (["--deadline-share", 0.5], "alpha"),
    # Deadline flows teach neither.
    (["--deadline-share", 1], None),
])
def test_each_set_learns_from_its_own_flows(tmp_path, shares, learns):
    r = run_ns3("--flows", 200, *KARUNA, "--scheme", "awafs", *shares,
                "--percentiles", "10,20", "--size-percentiles", "10,20",
                flows_csv=tmp_path / "f.csv", trace_csv=tmp_path / "t.csv")
    assert r["completed"] == r["completions"] == 200
    last = r["trace"][-1]
    assert last["thr"] == r["thresholds"]
    assert last["sthr"] == r["size_thresholds"]
    want_alpha = [LEARNED] * 2 if learns == "alpha" else [INITIAL] * 2
    want_beta = [LEARNED] * 2 if learns == "beta" else [INITIAL] * 2
    assert r["thresholds"] == want_alpha
    assert r["size_thresholds"] == want_beta


def test_without_karuna_the_words_change_nothing(tmp_path):
    """Types without --karuna: the words travel, the ports schedule as
    before (the same FCTs as a run without types)."""
    args = ["--flows", 200, "--trust", "host", "--queues", 3,
            "--scheme", "awafs"]
    plain = run_ns3(*args, flows_csv=tmp_path / "a.csv")
    typed = run_ns3(*args, *TYPES, flows_csv=tmp_path / "b.csv")
    assert [f["fct_ms"] for f in plain["rows"]] \
        == [f["fct_ms"] for f in typed["rows"]]
    assert "karuna_packets" not in typed


# The star at 100 Mbit/s: Karuna's four queues, each queue marking by its
# own backlog, DCTCP; the deadline flows with DCTCP or MCP.
STAR = ["--flows", FLOWS, *KARUNA, *TYPES, "--transport", "dctcp",
        "--ecn-mode", "queue", "--scheme", "static",
        "--thresholds", ",".join(map(str, ALPHA))]


def by_class(rows, t, size):
    return [f for f in rows if f["type"] == t and f["size"] == size]


def mean(values):
    values = list(values)
    return sum(values) / len(values)


def test_mcp_takes_just_the_rate_its_deadline_needs(tmp_path):
    """--deadline-transport mcp: a deadline flow paces at 5/4 of what it
    has left over the time left, so it finishes near its deadline instead
    of as soon as it can, and still in time; the flows without a deadline
    get the bandwidth it leaves: their small flows' mean FCT drops."""
    runs = {t: run_ns3(*STAR, "--deadline-transport", t,
                       flows_csv=tmp_path / f"{t}.csv")
            for t in ("dctcp", "mcp")}
    for r in runs.values():
        assert r["completed"] == FLOWS and r["drops"] == 0
    mcp, dctcp = runs["mcp"], runs["dctcp"]
    assert mcp["deadline_missed"] == mcp["deadline_given_up"] == 0
    assert dctcp["deadline_missed"] > 0

    def share_of_deadline(rows):
        return mean(f["fct_ms"] / f["deadline_ms"]
                    for f in by_class(rows, DEADLINE, LONG))
    assert share_of_deadline(dctcp["rows"]) < 0.5
    assert 0.7 < share_of_deadline(mcp["rows"]) <= 1
    for t in (SIZED, UNKNOWN):
        assert mean(f["fct_ms"] for f in by_class(mcp["rows"], t, SHORT)) \
            < 0.7 * mean(f["fct_ms"]
                         for f in by_class(dctcp["rows"], t, SHORT))


def test_mcp_gives_up_a_deadline_it_cannot_meet(tmp_path):
    """Deadlines of 2 ms (--deadline-rate far above the link): MCP gives up
    each one it has missed, and each that would need more than the link
    (the paper's Z > C), taking the deadline out of the socket's mark, and
    the port places the rest of the flow by its size -- segments that went
    to queue 0 as deadline segments under DCTCP are sized ones now, the
    same segments in all, none dropped; every flow completes."""
    args = [*STAR, "--deadline-ms", 2, "--deadline-rate", "400G"]
    dctcp = run_ns3(*args, "--deadline-transport", "dctcp")
    mcp = run_ns3(*args, "--deadline-transport", "mcp")
    assert mcp["completed"] == dctcp["completed"] == FLOWS
    assert mcp["deadline_given_up"] >= mcp["deadline_missed"] > 0
    assert mcp["drops"] == dctcp["drops"] == 0
    d, m = dctcp["karuna_packets"], mcp["karuna_packets"]
    assert m[0] < d[0] and m[1] > d[1]
    assert m[0] + m[1] == d[0] + d[1] and m[2] == d[2]


# Karuna's starvation (the paper's Fig. 14): every flow of known
# size in queue 1 (one {beta} bucket), seven in ten of them, at 90 % of
# the 1 Gbit/s port, and the flows of unknown size sieved to queue 3 past
# 40 kB, where the known ones starve them until their senders time out
# (a 10 ms least RTO).  The flow table of trust=switch sees the timeouts.
STARVED = ["--flows", 200, *ONE_LEAF, "--karuna", "on", "--trust", "switch",
           "--queues", 4, "--sized-share", 0.7, "--scheme", "static",
           "--thresholds", ",".join(map(str, ALPHA[:1] + (40000,))),
           "--size-thresholds", "4294967295,4294967295", "--load", 0.9,
           "--min-rto-ms", 10, "--ecn-mode", "queue"]


def test_aging_lifts_a_starved_flow_back_to_queue_1(tmp_path):
    """--aging on with kappa 2, as the switch's aging=on: a message ages
    at its second timeout, and one of unknown size restarts its count, so
    its next 20 kB go to queue 1 again, beside the flows that starved it.
    Without aging the same flows time out as often and none ever sends
    more than its first 20 kB from queue 1."""
    runs = {}
    for aging in ("off", "on"):
        waits = tmp_path / f"waits-{aging}.csv"
        r = run_ns3(*STARVED, "--aging", aging, "--aging-min-timeouts", 2,
                    "--aging-max-timeouts", 2, "--waits-csv", waits,
                    flows_csv=tmp_path / f"flows-{aging}.csv")
        r["waits"] = {int(w["id"]): w for w in read_csv(waits)}
        runs[aging] = r
    off, on = runs["off"], runs["on"]
    assert off["aging"] == "off" and on["aging"] == "on"
    assert off["timeouts"] > 0 and off["aged"] == 0
    assert on["aged"] > 0
    for r in (off, on):
        assert r["completed"] == 200 and r["drops"] == 0

    def queue1(r):
        return [data_packets(r["waits"][f["id"]], 1) for f in r["rows"]
                if f["type"] == UNKNOWN and f["size"] == LONG]
    first = segments(ALPHA[0])
    assert queue1(off) and set(queue1(off)) == {first}
    assert max(queue1(on)) > first


@pytest.mark.parametrize("args,says", [
    (["--deadline-share", "0.3", "--deadline-transport", "mcp"],
     "--deadline-transport mcp: MCP is DCTCP's window"),
    (["--deadline-share", "0.3", "--deadline-transport", "bbr"],
     "--deadline-transport must be dctcp or mcp"),
    (["--transport", "dctcp", "--deadline-transport", "mcp"],
     "--deadline-transport needs --deadline-share"),
    (["--karuna", "on", "--queues", "2"], "karuna: 3 queues at least"),
    (["--karuna", "on", "--queues", "4", "--thresholds", "1"],
     "thresholds: 4 queues with karuna take 2 values in bytes, not '1'"),
    (["--karuna", "on", "--queues", "3", "--size-thresholds", "1,2"],
     "size thresholds: 3 queues with karuna take 1 value in bytes"),
    (["--karuna", "on", "--queues", "3", "--scheme", "auto"],
     "percentiles: auto cannot go with karuna"),
    (["--karuna", "on", "--queues", "3", "--tardy", "tfs"],
     "tardy cannot go with karuna"),
    (["--karuna", "yes"], "--karuna must be on or off"),
    (["--karuna", "on", "--queues", "3", "--trust", "host", "--aging",
      "on"], "aging: needs trust=switch or verify"),
    (["--queues", "3", "--aging", "on"], "aging: needs karuna"),
    (["--karuna", "on", "--queues", "3", "--aging", "on",
      "--aging-min-timeouts", "5", "--aging-max-timeouts", "3"],
     "aging: kappa from 1 to 15, its least not above its most"),
    (["--aging", "yes"], "--aging must be on or off"),
    (["--aging-max-timeouts", "16"],
     "--aging-max-timeouts must be a whole number from 1 to 15"),
    (["--size-thresholds", "5"], "only with --karuna on"),
    (["--karuna", "on", "--queues", "3", "--scheme", "static",
      "--size-percentiles", "10"], "--size-percentiles: only awafs"),
    (["--deadline-share", "0.6", "--sized-share", "0.5"], "at most 1"),
    (["--deadline-ms", "10"], "--deadline-ms needs --deadline-share"),
    (["--deadline-share", "0.1", "--deadline-ms", "5000"],
     "--deadline-ms must be a whole number from 1 to 4095"),
])
def test_a_bad_karuna_argument_is_refused(args, says):
    proc = subprocess.run([str(NS3), *args], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 2, proc
    assert proc.stdout == ""
    assert says in proc.stderr


def test_the_karuna_driver_keeps_its_runs_and_sums_them_up(tmp_path):
    """sim/ns3_karuna.py: a run per scheme and seed, kept with checksums,
    a row per scheme and one against deadline-on-top; every scheme runs the
    same flows, whose types are a share each; a second call runs nothing
    again."""
    from sim import ns3_karuna

    args = ["--out", tmp_path, "--workload", "hadoop", "--flows", 60,
            "--seeds", 1, "--leaves", 1, "--hosts-per-leaf", 3,
            "--spines", 1, "--schemes", "dctcp,deadline-on-top,karuna-static"]
    ns3_karuna.main(list(map(str, args)))
    text = (tmp_path / "summary.md").read_text()
    for s in ("dctcp", "deadline-on-top", "karuna-static"):
        assert f"| {s} | 1 |" in text
    assert "| karuna-static | " in text.split("Against deadline-on-top")[1]
    sums = (tmp_path / "flows.sha256").read_text().split("\n")
    assert sorted(line.split()[1] for line in sums if line) == [
        "dctcp-seed1.csv", "deadline-on-top-seed1.csv",
        "karuna-static-seed1.csv"]
    rows = {s: read_flows(tmp_path / f"{s}-seed1.csv.gz")
            for s in ("dctcp", "karuna-static")}
    keys = ("id", "size", "start_s", "sender", "receiver", "type",
            "deadline_ms")
    assert [tuple(r[k] for k in keys) for r in rows["dctcp"]] \
        == [tuple(r[k] for k in keys) for r in rows["karuna-static"]]
    assert {r["type"] for r in rows["dctcp"]} == {DEADLINE, SIZED, UNKNOWN}
    # The static scheme's ports ran Karuna's 8 queues and said so.
    line = (tmp_path / "karuna-static-seed1.txt").read_text()
    assert " karuna_packets=" in line and " deadline_missed=" in line
    before = (tmp_path / "dctcp-seed1.txt").stat().st_mtime_ns
    ns3_karuna.main(list(map(str, args)))
    assert (tmp_path / "dctcp-seed1.txt").stat().st_mtime_ns == before


def test_the_karuna_driver_sums_up_aging_apart(tmp_path):
    """sim/ns3_karuna.py's aging pair: karuna-static on the switch's count
    without and with aging, summed up in a section of its own against the
    run without, with the large flows that aging is for."""
    from sim import ns3_karuna

    args = ["--out", tmp_path, "--workload", "longflow", "--flows", 40,
            "--seeds", 1, "--leaves", 1, "--hosts-per-leaf", 3,
            "--spines", 1, "--rate", "1G", "--schemes",
            "karuna-static,karuna-aging-off,karuna-aging-on"]
    ns3_karuna.main(list(map(str, args)))
    main, aging = (tmp_path / "summary.md").read_text().split(
        "## Aging (the paper's Fig. 14)")
    assert "| karuna-static | 1 |" in main and "karuna-aging" not in main
    assert "type 3 large mean" in aging
    assert "| karuna-aging-on | " in aging.split(
        "Against karuna-aging-off")[1]
    for on in ("off", "on"):
        line = (tmp_path / f"karuna-aging-{on}-seed1.txt").read_text()
        assert " trust=switch " in line and f" aging={on} " in line

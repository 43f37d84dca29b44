"""The thesis micro-benchmark and a workload shift, as deterministic
simulations of the AWAFS core (sim/awafs-sim.c driving lib/).

Expected values are computed here, independently of the C code, from the
workload CDF files."""

import subprocess

import pytest

from testbed.sim import SIM, run_sim, window_deviation
from testbed.workload import inverse_cdf, load_cdf

WINDOW_MS, INTERVAL_MS = 250, 200


@pytest.mark.parametrize("init", [1000, 10000, 1000000])
def test_micro_benchmark_converges_to_10kB(init):
    """2 queues, RefPct 10, W 250 ms, T 200 ms, 80 % 10 kB / 20 % 1000 kB:
    the threshold reaches 10 kB within two updates after the window fills,
    from any InitThr, and stays there."""
    rows = run_sim("--micro", "--queues", 2, "--percentiles", 10,
                   "--thresholds", init, "--window-ms", WINDOW_MS,
                   "--interval-ms", INTERVAL_MS, "--rate", 1000,
                   "--duration-ms", 3000)
    assert rows[0]["t_ms"] == 0 and rows[0]["thr"] == [init]
    assert rows[0]["version"] == 0
    updates = [r for r in rows if r["t_ms"] >= WINDOW_MS]
    deadline = updates[1]["t_ms"]           # second update after filling
    converged = [r for r in rows if r["thr"] == [10000]]
    assert converged and converged[0]["t_ms"] <= deadline, rows
    assert all(r["thr"] == [10000] for r in rows
               if r["t_ms"] >= converged[0]["t_ms"])
    # Every round published a new version.
    assert [r["version"] for r in rows] == list(range(len(rows)))


@pytest.mark.parametrize("window", ["exact", "histogram"])
def test_auto_separates_the_micro_benchmarks_two_sizes(window):
    """--auto (percentiles=auto at a fixed port load): on the micro mix the
    model's one threshold goes between the 10 kB and the 1000 kB flows
    once the window holds min-samples completions (the first set it
    publishes), from a start above both, and stays there."""
    rows = run_sim("--micro", "--queues", 2, "--thresholds", 2000000,
                   "--window-type", window, "--window-ms", WINDOW_MS,
                   "--interval-ms", INTERVAL_MS, "--rate", 1000,
                   "--duration-ms", 2000, "--auto", 0.8)
    assert rows[0]["thr"] == [2000000]
    learned = rows[1:]
    assert all(10000 <= r["thr"][0] < 1000000 for r in learned), rows
    assert len({tuple(r["thr"]) for r in learned}) == 1, rows


@pytest.mark.parametrize("load", ["0", "1", "x"])
def test_auto_needs_a_load_below_one(load):
    out = subprocess.run([SIM, "--micro", "--auto", load],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "--auto needs a load in (0, 1)" in out.stderr


def predict(*args):
    """awafs-sim --predict's sets: {name: (mean, short mean, thresholds)}."""
    out = subprocess.run([SIM, *map(str, args)], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out[1].split()[:2] == ["set", "mean"]
    rows = {}
    for line in out[2:]:
        name, rest = line[:14].strip(), line[14:].split()
        rows[name] = (float(rest[0]), float(rest[1]),
                      [int(t) for t in rest[2].split(",")])
    return rows


def test_predict_weighs_sets_by_the_model():
    """--predict: the FCT model of percentiles=auto on the micro mix at
    80 % load, 2 queues.  Its optimum separates the two sizes; no set beats
    the optimum of each objective on that objective; one queue for all
    (a threshold above both sizes) makes the 10 kB flows wait behind the
    1000 kB ones, and demoting them after 5 kB makes them share the lower
    queue with the rest of the 1000 kB flows."""
    rows = predict("--micro", "--queues", 2, "--auto", 0.8,
                   "--predict", 5000, "--predict", 2000000)
    assert list(rows) == ["optimum fct", "optimum short", "set 1", "set 2"]
    assert 10000 <= rows["optimum fct"][2][0] < 1000000
    assert rows["set 1"][2] == [5000] and rows["set 2"][2] == [2000000]
    for name, (mean, short, _) in rows.items():
        assert mean >= rows["optimum fct"][0] * (1 - 1e-9), name
        assert short >= rows["optimum short"][1] * (1 - 1e-9), name
    # The short flows: 10 kB is 10,000 byte times alone.
    assert 10000 < rows["optimum short"][1] < 2 * 10000
    assert rows["set 2"][1] > 3 * rows["optimum short"][1]
    assert rows["set 1"][1] > 2 * rows["optimum short"][1]


@pytest.mark.parametrize("args, error", [
    (["--predict", "1000"], "--predict needs --auto LOAD"),
    (["--auto", "0.5", "--predict", "1000,2000"],
     "--predict needs queues - 1 values"),
    (["--auto", "0.5", "--queues", 3, "--predict", "2000,1000"],
     "--predict's thresholds must not decrease"),
])
def test_predict_refuses_what_it_cannot_weigh(args, error):
    out = subprocess.run([SIM, "--micro", *map(str, args)],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert error in out.stderr


def test_static_mode_never_moves():
    rows = run_sim("--micro", "--queues", 2, "--thresholds", 1000,
                   "--static", "--duration-ms", 1000)
    assert {tuple(r["thr"]) for r in rows} == {(1000,)}
    assert {r["version"] for r in rows} == {0}


def test_workload_shift_moves_thresholds(workloads):
    """4 queues, RefPct 10/20/30: data mining, then web search.  Before the
    shift the thresholds are data mining's percentiles, after it web
    search's, and every threshold moves up (web search's small flows are
    larger)."""
    pcts = [10, 20, 30]
    shift_ms, duration_ms = 3000, 6000
    dm, ws = workloads / "datamining.cdf", workloads / "websearch.cdf"
    rows = run_sim("--queues", 4, "--percentiles", "10,20,30",
                   "--workload", dm, "--shift-to", ws,
                   "--shift-at-ms", shift_ms, "--duration-ms", duration_ms,
                   "--rate", 4000)
    want_dm = [inverse_cdf(load_cdf(dm), p / 100) for p in pcts]
    want_ws = [inverse_cdf(load_cdf(ws), p / 100) for p in pcts]

    before = [r for r in rows if WINDOW_MS <= r["t_ms"] <= shift_ms]
    after = [r for r in rows
             if r["t_ms"] >= shift_ms + WINDOW_MS + INTERVAL_MS]
    assert before and after
    for r in before:
        assert r["thr"] == pytest.approx(want_dm, rel=0.02), r
    for r in after:
        assert r["thr"] == pytest.approx(want_ws, rel=0.03), r
    for old, new in zip(before[-1]["thr"], after[0]["thr"]):
        assert new > old


BUCKET_BOUND = 2 ** -7      # AWAFS_HIST_SUB_BITS = 6: half a bucket.
PERCENTILE_SETS = [[10, 20, 30, 40, 50, 60, 70], [1, 5, 25, 50, 75, 95, 99]]


@pytest.mark.parametrize("pcts", PERCENTILE_SETS, ids=["10-70", "1-99"])
def test_histogram_window_within_bound_on_every_workload(workloads, pcts):
    """On every workload CDF, the O(1)-memory histogram window's thresholds
    stay within the documented bound of the exact window's.  The window
    (256 ms) is a whole number of slices and the interval (208 ms) too, so
    both windows hold the same completions and only bucketing differs."""
    cdfs = sorted(workloads.glob("*.cdf"))
    assert len(cdfs) >= 4
    for cdf in cdfs:
        dev = window_deviation(cdf, pcts, window_ms=256, interval_ms=208)
        assert dev <= BUCKET_BOUND, (cdf.name, dev)

"""`make eval`: the thesis's experiments on real TCP through the switch.

    python3 eval/run.py [--out DIR] [--only EXPERIMENT] [--match TEXT]
                        [--scale F] [--list]

Runs every run of the suite that has no result yet (a run's result is its
CSV under DIR/runs/, written when it finishes: interrupted, the suite
resumes where it stopped), with a progress line and an estimate of the time
left, then regenerates the report (eval/report.py) from all the CSVs.
--match TEXT runs only the runs whose name contains TEXT (e.g. load80).
--scale F runs F times the flows of each run (at least 20), for a quick look;
give it its own --out, as its results are not the suite's.

Experiments (the bottleneck is the awafs port toward the receiver, shaped to
100 Mbit/s, which the two cores carry with headroom; flow sizes are the
workloads' own; the same seed for every scheme of a workload and load):

- micro (§5.3): the micro benchmark with nginx (testbed/micro.py) at loads
  50-90 %: FIFO, static 1 kB, 10 kB and 1000 kB, AWAFS (RefPct 10) from
  1 kB and from 1000 kB.
- pias (§5.5): the project's generator (testbed/flowgen.py: persistent
  connections, a header then the body per response) with the web search,
  data mining, Hadoop and cache workloads at 50 % and 80 % load, 8 queues:
  PIAS's optimised static thresholds for web search and for data mining
  (matched on their own workload, mismatched elsewhere), and AWAFS from the
  web-search thresholds with the thesis's RefPct (10, 20, ..., 70) and with
  the web-search thresholds' own CDF positions.
"""

import argparse
import csv
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "eval"))

import report  # noqa: E402
from testbed.workload import workloads_dir  # noqa: E402

RATE = 100000000
SECONDS_PER_RUN = 150          # Flows are sized to take about this long.
MICRO_LOADS = [0.5, 0.6, 0.7, 0.8, 0.9]
PIAS_LOADS = [0.5, 0.8]
WORKLOADS = ["websearch", "datamining", "hadoop", "cache"]
MICRO_MEAN_BYTES = 0.8 * 10000 + 0.2 * 1000000
MEAN_BYTES = {"websearch": 1665830, "datamining": 7470236,
              "hadoop": 134853, "cache": 687657}
COMMON8 = {"queues": 8, "window-ms": 1000, "interval-ms": 200,
           "min-samples": 10}


def pias_thresholds(workload, load):
    """PIAS-NS2's 7 thresholds (bytes) and their CDF positions (%)."""
    thr, pos = [], []
    path = workloads_dir() / "pias_ns2_thresholds_by_load__DERIVED.csv"
    for line in open(path):
        if line.startswith("#"):
            continue
        w, lo, _, _, b, p = line.strip().split(",")
        if w == workload and abs(float(lo) - load) < 1e-9:
            thr.append(int(b))
            pos.append(float(p) * 100)
    return thr, pos


def pias_schemes(load):
    ws, ws_pos = pias_thresholds("websearch", load)
    dm, _ = pias_thresholds("datamining", load)

    def csvlist(v):
        return ",".join(map(str, v))

    return {
        "pias-websearch": {**COMMON8, "mode": "static",
                           "thresholds": csvlist(ws)},
        "pias-datamining": {**COMMON8, "mode": "static",
                            "thresholds": csvlist(dm)},
        "awafs-refpct": {**COMMON8, "mode": "adaptive",
                         "thresholds": csvlist(ws),
                         "percentiles": "10,20,30,40,50,60,70"},
        "awafs-pias-positions": {**COMMON8, "mode": "adaptive",
                                 "thresholds": csvlist(ws),
                                 "percentiles": csvlist(
                                     [round(p, 1) for p in ws_pos])},
    }


def suite():
    """Every run: (experiment, key, parameters).  A run's flows take about
    SECONDS_PER_RUN at its load, with at least 200 flows."""
    runs = []
    for load in MICRO_LOADS:
        for scheme in ["fifo", "static-1KB", "static-10KB", "static-1000KB",
                       "awafs-pct10-from-1KB", "awafs-pct10"]:
            runs.append(("micro", f"load{int(load * 100)}-{scheme}",
                         {"scheme": scheme, "load": load,
                          "mean_bytes": MICRO_MEAN_BYTES}))
    for workload in WORKLOADS:
        for load in PIAS_LOADS:
            for scheme, qos in pias_schemes(load).items():
                runs.append(("pias", f"{workload}-load{int(load * 100)}-"
                             f"{scheme}", {"workload": workload, "load": load,
                                           "scheme": scheme, "qos": qos,
                                           "mean_bytes":
                                           MEAN_BYTES[workload]}))
    for _, _, params in runs:
        params["flows"] = max(200, int(params["load"] * RATE * SECONDS_PER_RUN
                                       / (8 * params["mean_bytes"])))
    return runs


def seconds(params):
    """A run's expected duration: its flows at its load, and set-up."""
    return (params["flows"] * params["mean_bytes"] * 8
            / (params["load"] * RATE) + 10)


def pending(runs, out):
    """The runs with no result under 'out' yet."""
    return [r for r in runs
            if not (out / "runs" / r[0] / f"{r[1]}.csv").exists()]


def run_micro(bench, params, out):
    r = bench.measure(params["scheme"], params["flows"],
                      params["load"] * RATE, RATE)
    write(out, r.rows, [(t, [v]) for t, v in r.thresholds])


def run_pias(bench, params, out):
    rows, thresholds = bench.measure(
        params["qos"], workloads_dir() / f"{params['workload']}.cdf",
        params["flows"], params["load"] * RATE, RATE)
    write(out, rows, thresholds)


def write(out, rows, thresholds):
    """The run's flows to 'out' and its thresholds beside it; the flows'
    file last, so that an interrupted run leaves no result."""
    with open(out.with_suffix(".thr.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "thresholds"])
        for t, v in thresholds:
            w.writerow([round(t, 3), " ".join(map(str, v))])
    tmp = out.with_suffix(".part")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    tmp.rename(out)


def progress(done, total, elapsed, left):
    width = 30
    bar = "#" * (width * done // max(total, 1))
    print(f"\r[{bar:<{width}}] {done}/{total} runs, {elapsed / 60:.0f} min "
          f"elapsed, about {left / 60:.0f} min left ", end="",
          file=sys.stderr, flush=True)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "build" / "eval"))
    ap.add_argument("--only", choices=["micro", "pias"])
    ap.add_argument("--match", default="")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)
    runs = [r for r in suite() if (not args.only or r[0] == args.only)
            and args.match in r[1]]
    for _, _, params in runs:
        params["flows"] = max(20, int(params["flows"] * args.scale))
    if args.list:
        for exp, key, params in runs:
            print(f"{exp:6} {key:50} {params['flows']:5} flows, "
                  f"~{seconds(params):.0f} s")
        return
    todo = pending(runs, out)
    print(f"{len(runs) - len(todo)} of {len(runs)} runs already done; "
          f"{len(todo)} to run", file=sys.stderr)
    t0 = time.time()
    left = sum(seconds(r[2]) for r in todo)
    benches = {}
    try:
        for i, (exp, key, params) in enumerate(todo):
            progress(i, len(todo), time.time() - t0, left)
            if exp not in benches:
                for b in benches.values():
                    b.close()
                benches.clear()
                benches[exp] = new_bench(exp)
            path = out / "runs" / exp / f"{key}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            (run_micro if exp == "micro" else run_pias)(benches[exp],
                                                        params, path)
            left -= seconds(params)
        progress(len(todo), len(todo), time.time() - t0, 0)
        print(file=sys.stderr)
    finally:
        for b in benches.values():
            b.close()
    report.main(["--out", str(out)])


def new_bench(exp):
    if exp == "micro":
        from testbed.micro import MicroBench
        return MicroBench()
    from testbed.flowbench import FlowBench
    return FlowBench()


if __name__ == "__main__":
    main(sys.argv[1:])

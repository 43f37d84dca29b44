"""`make eval`: the thesis's experiments on real TCP through the switch.

    python3 -m eval.run [--out DIR] [--only EXPERIMENT] [--match REGEX]
                        [--seeds N] [--by-seed] [--scale F] [--list]

Runs every run of the suite that has no result yet (a run's result is its
CSV under DIR/runs/EXPERIMENT/, written last, when it finishes: interrupted,
the suite resumes where it stopped), with a progress line and an estimate
of the time left, then regenerates the report (eval/report.py) from all the
CSVs.  --match REGEX runs only the runs whose name (without its seed) it
finds (re.search: e.g. load80, or 'cache-load80-(pias-cache|awafs-auto)$').
--seeds N runs each run with seeds 1 to N (other sizes and arrivals; seed
1 is the run's own name, seed S > 1 its name with -seedS), and the report
pools a run's seeds (eval/report.py seeds_section()).  --by-seed runs
every selected run of seed 1, then of seed 2, and so on, instead of each
run's seeds in turn: runs that are compared then run minutes apart, not
tens of minutes, as this machine's speed drifts (an A/B).
--scale F runs F times the flows of each run (at least 20), for a quick
look; give it its own --out, as its results are not the suite's.

Every run writes, beside its flows' CSV: RUN.json (its parameters, the
awafs ports' drop and ECN-mark counters, and its transport as its sockets
showed it: testbed/transport.py) and RUN.thr.csv (the thresholds of
its awafs ports, sampled while it ran).

Scaling.  The bottleneck of every experiment is an awafs egress port shaped
to RATE (100 Mbit/s; the two cores carry it with headroom: one PMD core
forwards every frame of every port), the thesis's is 10 Gb/s.  Flow sizes
are the workloads' own, so flows arrive 100 times less often at the same
load: the window W_update is 1 s for the micro benchmark (about 50
completions at 80 % load) and 20 s for the data-center workloads (data
mining completes about one flow per second at 80 % load; W_update
scaled with the rate would be 25-100 s).  T_schedule stays 200 ms.  Buffer:
1024 packets; ECN marking threshold and transport: testbed/senderbed.py
(DCTCP, K = 20 packets, as the thesis runs DCTCP; cubic and BBR without ECN
as the other transports).

Experiments (the same seed for every scheme of a workload and load):

- micro (§5.3): the micro benchmark with nginx (testbed/micro.py) at loads
  50-90 %, DCTCP: FIFO, static 1 kB, 10 kB and 1000 kB, AWAFS (RefPct 10)
  from 1 kB, 10 kB and 1000 kB; at 80 % also RefPct 70, and cubic and BBR
  (without ECN).
- shift (§5.4): data mining, then web search (SHIFT_SECONDS each) at 80 %,
  2, 3 and 4 queues: static thresholds 7 kB, 14 kB, 21 kB (right for data
  mining, wrong for web search; the thesis's InitThr) and AWAFS from them
  with RefPct 10, 20, 30.
- pias (§5.5): the project's generator (testbed/flowgen.py: persistent
  connections, a header then the body per response) with the web search,
  data mining, Hadoop and cache workloads at 50 % and 80 % load, 8 queues:
  PIAS's optimised static thresholds for web search and for data mining
  (matched on their own workload, mismatched elsewhere), for Hadoop and
  cache those of PIAS's objective (pias_matched()), the workload CDF's
  10th..70th percentiles fixed, halved and doubled (with PIAS's, the sweep
  whose best is the best static thresholds in hindsight), and AWAFS from
  the web-search thresholds with the thesis's RefPct (10, 20, ..., 70),
  with the web-search thresholds' own CDF positions and with
  percentiles=auto; web search at 80 % also with a connection per flow.
- tardy (seed 004, Fig. 2): data mining and cache at loads 10-90 %, cubic
  without ECN and a shallow buffer (TARDY_BUFFER packets) so that flows
  lose packets, the switch's own count (trust=switch), AWAFS on 4 queues
  as in the shift experiment: tardy flows ignored ("off"), TFS and TFS+
  (100 kB).
- karuna (seed 003, §8): web search at 50 % and 80 % load, a third of the
  flows of each type (n1's responses have a deadline, KARUNA_DEADLINE; n2's
  a known size; n3's neither), DCTCP, 8 queues: everything in one queue
  ("dctcp-only"), deadline flows in queue 0 and the rest in one queue below
  ("deadline-on-top"), and Karuna with the static thresholds of
  sim/karuna_thresholds.py and with thresholds learned from them (RefPct
  10, ..., 60 for both {alpha} and {beta}); all with DCTCP, and Karuna's
  static thresholds again with MCP (awafs_mcp: every flow DCTCP, deadline
  flows paced to their deadline; "karuna-mcp").  Aging (its Fig. 14): the
  Long Flow workload (eval/workloads/longflow.cdf, 1 kB to 10 MB) at 80 %,
  Karuna's static thresholds for it with the switch's count, without and
  with aging, DCTCP.
- hetero (§5.6): the leaf-spine fabric of testbed/leafspine.py, web search
  between hosts i < j and data mining otherwise, at 50 % and 80 % of every
  downlink: PIAS's web-search thresholds on every port against AWAFS
  (RefPct 10, ..., 70, and percentiles=auto) on every port.
"""

import argparse
import csv
import json
import re
import sys
import time
from functools import lru_cache
from pathlib import Path

from eval import report
from eval.experiments import (EXPERIMENTS, MICRO_MEAN_BYTES, RATE,
                              cdf_path, mean_bytes)
from testbed.ovs_sandbox import one_switch_per_machine
from testbed.workload import inverse_cdf, load_cdf, workloads_dir

REPO = Path(__file__).resolve().parent.parent
SECONDS_PER_RUN = 30           # Arrivals of a run span about this long.
SHIFT_SECONDS = 60             # Each workload of the shift experiment.
MICRO_LOADS = [0.5, 0.6, 0.7, 0.8, 0.9]
MICRO_SCHEMES = ["fifo", "static-1KB", "static-10KB", "static-1000KB",
                 "awafs-pct10-from-1KB", "awafs-pct10-from-10KB",
                 "awafs-pct10", "awafs-auto"]
PIAS_LOADS = [0.5, 0.8]
HETERO_LOADS = [0.5, 0.8]
WORKLOADS = ["websearch", "datamining", "hadoop", "cache"]
WORKLOAD_WINDOW = {"window-ms": 20000, "interval-ms": 200,
                   "min-samples": 10}
REFPCT8 = "10,20,30,40,50,60,70"
# What every scheme of the pias experiment runs on, and eval/probe.py's.
PIAS_QOS = {**WORKLOAD_WINDOW, "queues": 8}
STATIC_FACTORS = (0.5, 1, 2)
TARDY_LOADS = [0.1, 0.3, 0.5, 0.7, 0.9]
TARDY_WORKLOADS = ["datamining", "cache"]
TARDY_BUFFER = 32
KARUNA_LOADS = [0.5, 0.8]
KARUNA_QUEUES = 8
# n1's deadline: the response's time at 25 Mbit/s, at least 10 ms (the
# paper's smallest is 5 ms at 10 Gb/s with a 100 us base RTT; ours is about
# 250 us), so a third of the flows can all meet theirs at 80 % load.
KARUNA_DEADLINE = "deadline:10:25000000"
KARUNA_SENDERS = (KARUNA_DEADLINE, "size", None)
KARUNA_AGING_SECONDS = 60


def csvlist(v):
    return ",".join(map(str, v))


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


@lru_cache(maxsize=None)
def pias_objective_thresholds(workload, load, queues=8):
    """The thresholds of PIAS's objective (its Sec. 4, solved by
    sim/karuna_thresholds.py with every flow of unknown size) at 'load',
    through 'workload''s CDF."""
    from sim.karuna_thresholds import solve, thresholds
    _, theta, _ = solve(queues, load, (0.0, 0.0, 1.0))
    return thresholds(load_cdf(cdf_path(workload)), theta, 1.0)


def pias_matched(workload, load):
    """PIAS's thresholds for 'workload' itself at 'load': PIAS-NS2's where
    it publishes them (web search, data mining), else its objective's."""
    thr, _ = pias_thresholds(workload, load)
    return thr or pias_objective_thresholds(workload, load)


def static_refpct(workload, factor):
    """The workload CDF's REFPCT8 percentiles times 'factor', in bytes:
    what RefPct learns from a window of the workload, fixed."""
    cdf = load_cdf(cdf_path(workload))
    return [round(factor * inverse_cdf(cdf, int(p) / 100))
            for p in REFPCT8.split(",")]


def pias_schemes(workload, load):
    """The pias experiment's schemes for 'workload' at 'load'."""
    ws, ws_pos = pias_thresholds("websearch", load)
    dm, _ = pias_thresholds("datamining", load)
    schemes = {
        "pias-websearch": {**PIAS_QOS, "mode": "static",
                           "thresholds": csvlist(ws)},
        "pias-datamining": {**PIAS_QOS, "mode": "static",
                            "thresholds": csvlist(dm)},
        "awafs-refpct": {**PIAS_QOS, "mode": "adaptive",
                         "thresholds": csvlist(ws), "percentiles": REFPCT8},
        "awafs-pias-positions": {**PIAS_QOS, "mode": "adaptive",
                                 "thresholds": csvlist(ws),
                                 "percentiles": csvlist(
                                     [round(p, 1) for p in ws_pos])},
        "awafs-auto": {**PIAS_QOS, "mode": "adaptive",
                       "thresholds": csvlist(ws), "percentiles": "auto"},
        "awafs-auto-slowdown": {**PIAS_QOS, "mode": "adaptive",
                                "thresholds": csvlist(ws),
                                "percentiles": "auto",
                                "objective": "slowdown"},
        "awafs-auto-short": {**PIAS_QOS, "mode": "adaptive",
                             "thresholds": csvlist(ws),
                             "percentiles": "auto", "objective": "short"},
        "awafs-auto-pias": {**PIAS_QOS, "mode": "adaptive",
                            "thresholds": csvlist(ws),
                            "percentiles": "auto", "objective": "pias"},
    }
    matched = f"pias-{workload}"
    if matched not in schemes:
        schemes[matched] = {**PIAS_QOS, "mode": "static",
                            "thresholds": csvlist(pias_matched(workload,
                                                               load))}
    # The sweep whose best point, with PIAS's, is the best static
    # thresholds in hindsight (issue 33).
    for factor in STATIC_FACTORS:
        name = "static-refpct" + (f"-x{factor:g}" if factor != 1 else "")
        schemes[name] = {**PIAS_QOS, "mode": "static",
                         "thresholds": csvlist(static_refpct(workload,
                                                             factor))}
    return schemes


def shift_scheme(queues, mode):
    """The thesis's §5.4 parameters: InitThr 7 kB, 14 kB, ...; RefPct 10,
    20, ..."""
    qos = {**WORKLOAD_WINDOW, "queues": queues, "mode": mode,
           "thresholds": csvlist([7000 * (i + 1) for i in range(queues - 1)])}
    if mode == "adaptive":
        qos["percentiles"] = csvlist([10 * (i + 1) for i in range(queues - 1)])
    return qos


def tardy_scheme(tardy):
    """AWAFS on 4 queues as in the shift experiment, with the switch's count
    (which TFS needs) and a shallow buffer."""
    return {**shift_scheme(4, "adaptive"), "trust": "switch",
            "buffer": TARDY_BUFFER, "tardy": tardy}


def karuna_schemes(workload, load):
    """dctcp-only, deadline-on-top and Karuna with the static thresholds of
    sim/karuna_thresholds.py (a third of the flows of each type), and
    learned from them."""
    from sim.karuna_thresholds import solve, thresholds
    shares = (1 / 3, 1 / 3, 1 / 3)
    points = load_cdf(cdf_path(workload))
    phi, theta, _ = solve(KARUNA_QUEUES - 1, load, shares)
    beta = csvlist(thresholds(points, phi, shares[1]))
    alpha = csvlist(thresholds(points, theta, shares[2]))
    one_queue = 4294967295
    karuna = {**WORKLOAD_WINDOW, "queues": KARUNA_QUEUES, "karuna": "on",
              "thresholds": alpha, "size-thresholds": beta}
    refpct = csvlist(range(10, 10 * (KARUNA_QUEUES - 1), 10))
    return {
        "dctcp-only": {"queues": 2, "mode": "static",
                       "thresholds": one_queue},
        "deadline-on-top": {"queues": 3, "karuna": "on", "mode": "static",
                            "thresholds": one_queue,
                            "size-thresholds": one_queue},
        "karuna-static": {**karuna, "mode": "static"},
        "karuna-adaptive": {**karuna, "mode": "adaptive",
                            "percentiles": refpct,
                            "size-percentiles": refpct},
    }


def flows_for(load, mean, seconds=SECONDS_PER_RUN):
    """How many flows of 'mean' bytes arrive in 'seconds' at 'load'."""
    return max(100, int(load * RATE * seconds / (8 * mean)))


def suite():
    """Every run: (experiment, key, parameters)."""
    runs = []

    def micro(transport, load, scheme):
        runs.append(("micro", f"{transport}-load{int(load * 100)}-{scheme}",
                     {"transport": transport, "scheme": scheme, "load": load,
                      "flows": flows_for(load, MICRO_MEAN_BYTES)}))

    for load in MICRO_LOADS:
        for scheme in MICRO_SCHEMES:
            micro("dctcp", load, scheme)
    micro("dctcp", 0.8, "awafs-pct70")
    for transport in ("cubic", "bbr"):
        for scheme in ["fifo", "static-1000KB", "static-10KB",
                       "awafs-pct10"]:
            micro(transport, 0.8, scheme)

    for queues in (2, 3, 4):
        for mode in ("static", "adaptive"):
            phases = [(w, flows_for(0.8, mean_bytes(w), SHIFT_SECONDS))
                      for w in ("datamining", "websearch")]
            runs.append(("shift", f"q{queues}-{mode}",
                         {"queues": queues, "load": 0.8, "phases": phases,
                          "qos": shift_scheme(queues, mode),
                          "scheme": "awafs" if mode == "adaptive"
                          else "static"}))

    runs.append(("shift", "q4-auto",
                 {"queues": 4, "load": 0.8, "scheme": "awafs-auto",
                  "phases": [(w, flows_for(0.8, mean_bytes(w), SHIFT_SECONDS))
                             for w in ("datamining", "websearch")],
                  "qos": {**shift_scheme(4, "adaptive"),
                          "percentiles": "auto"}}))

    for workload in WORKLOADS:
        for load in PIAS_LOADS:
            for scheme, qos in pias_schemes(workload, load).items():
                runs.append(("pias", f"{workload}-load{int(load * 100)}-"
                             f"{scheme}", {"workload": workload, "load": load,
                                           "scheme": scheme, "qos": qos}))
    for scheme in ("pias-datamining", "awafs-refpct"):
        runs.append(("pias", f"websearch-load80-{scheme}-per-flow",
                     {"workload": "websearch", "load": 0.8, "per_flow": True,
                      "scheme": f"{scheme}-per-flow",
                      "qos": pias_schemes("websearch", 0.8)[scheme]}))
    for workload in TARDY_WORKLOADS:
        for load in TARDY_LOADS:
            for tardy in ("off", "tfs", "tfs+"):
                runs.append(("tardy", f"{workload}-load{int(load * 100)}-"
                             f"{tardy}", {"workload": workload, "load": load,
                                          "transport": "cubic",
                                          "scheme": tardy,
                                          "qos": tardy_scheme(tardy)}))
    for load in KARUNA_LOADS:
        schemes = karuna_schemes("websearch", load)
        for scheme, qos in schemes.items():
            runs.append(("karuna", f"websearch-load{int(load * 100)}-"
                         f"{scheme}", {"workload": "websearch", "load": load,
                                       "scheme": scheme, "qos": qos,
                                       "karuna": KARUNA_SENDERS}))
        runs.append(("karuna", f"websearch-load{int(load * 100)}-karuna-mcp",
                     {"workload": "websearch", "load": load,
                      "scheme": "karuna-mcp", "transport": "mcp",
                      "qos": schemes["karuna-static"],
                      "karuna": KARUNA_SENDERS}))
    aging = karuna_schemes("longflow", 0.8)["karuna-static"]
    for on in ("off", "on"):
        runs.append(("karuna", f"longflow-load80-aging-{on}",
                     {"workload": "longflow", "load": 0.8,
                      "scheme": f"karuna-aging-{on}",
                      "seconds": KARUNA_AGING_SECONDS,
                      "qos": {**aging, "trust": "switch", "aging": on},
                      "karuna": KARUNA_SENDERS}))
    for _, _, p in runs:
        if "workload" in p:
            p["phases"] = [(p["workload"], flows_for(
                p["load"], mean_bytes(p["workload"]),
                p.get("seconds", SECONDS_PER_RUN)))]

    for load in HETERO_LOADS:
        schemes = pias_schemes("websearch", load)
        for scheme in ("pias-websearch", "awafs-refpct", "awafs-auto"):
            runs.append(("hetero", f"load{int(load * 100)}-{scheme}",
                         {"load": load, "scheme": scheme,
                          "qos": schemes[scheme],
                          "seconds": SECONDS_PER_RUN}))
    return runs


def with_seeds(runs, n):
    """Each of 'runs' with seeds 1 to 'n': seed 1 keeps its name."""
    return [(exp, key if seed == 1 else f"{key}-seed{seed}",
             {**params, "seed": seed})
            for exp, key, params in runs for seed in range(1, n + 1)]


def seconds(exp, params):
    """A run's expected duration."""
    return EXPERIMENTS[exp].seconds(params)


def pending(runs, out):
    """The runs with no result under 'out' yet."""
    return [r for r in runs
            if not (out / "runs" / r[0] / f"{r[1]}.csv").exists()]


def write(out, params, rows, thresholds, stats, transport=None):
    """The run's parameters and thresholds beside its flows' CSV 'out'; the
    flows' CSV last, so that an interrupted run leaves no result.
    'transport': what its sockets ran (testbed/transport.py Proof.record()),
    under "transport_proof"."""
    meta = {**params, "ports": stats}
    if transport:
        meta["transport"] = transport["transport"]
        meta["transport_proof"] = transport
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1,
                                                   default=str))
    with open(out.with_suffix(".thr.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "port", "thresholds"])
        for port, series in thresholds.items():
            for t, v in series:
                w.writerow([round(t, 3), port, " ".join(map(str, v))])
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


def run_all(todo, out):
    """Runs 'todo', writing each run's files under 'out'."""
    t0 = time.time()
    left = sum(seconds(e, p) for e, _, p in todo)
    kind, bench = None, None
    try:
        for i, (exp, key, params) in enumerate(todo):
            progress(i, len(todo), time.time() - t0, left)
            new_kind, make = EXPERIMENTS[exp].bench(params)
            if new_kind != kind:
                if bench:
                    bench.close()
                    bench = None
                bench, kind = make(), new_kind
            path = out / "runs" / exp / f"{key}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path, params, *EXPERIMENTS[exp].measure(bench, params),
                  bench.transport_record)
            left -= seconds(exp, params)
        progress(len(todo), len(todo), time.time() - t0, 0)
        print(file=sys.stderr)
    finally:
        if bench:
            bench.close()


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "build" / "eval"))
    ap.add_argument("--only", choices=list(EXPERIMENTS))
    ap.add_argument("--match", default="")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--by-seed", action="store_true")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds: at least 1")
    out = Path(args.out)
    runs = with_seeds([r for r in suite()
                       if (not args.only or r[0] == args.only)
                       and re.search(args.match, r[1])], args.seeds)
    if args.by_seed:
        runs.sort(key=lambda r: r[2]["seed"])
    for exp, _, params in runs:
        EXPERIMENTS[exp].scale(params, args.scale)
    if args.list:
        for exp, key, params in runs:
            print(f"{exp:6} {key:45} ~{seconds(exp, params):.0f} s")
        print(f"{len(runs)} runs, about "
              f"{sum(seconds(e, p) for e, _, p in runs) / 60:.0f} min")
        return
    todo = pending(runs, out)
    print(f"{len(runs) - len(todo)} of {len(runs)} runs already done; "
          f"{len(todo)} to run", file=sys.stderr)
    # Runs of one bench together: a bench (hosts, servers) starts once.
    todo.sort(key=lambda r: str(EXPERIMENTS[r[0]].bench(r[2])[0]))
    # Test runs, soaks and the suite use the same machine-wide names.
    with one_switch_per_machine():
        run_all(todo, out)
    report.main(["--out", str(out)])


if __name__ == "__main__":
    main(sys.argv[1:])

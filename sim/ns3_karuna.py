"""Karuna's large-scale simulation (seed 003, §8.2.1) on ns-3, with the
unchanged core on every switch port in Karuna's mode: build/bin/awafs-ns3
--topology leaf-spine --karuna on.

The paper's set-up: a 144-server leaf-spine (9 ToRs of 16 servers, 4
spines), 10 Gbit/s host links and 40 Gbit/s uplinks, ECN at 65 packets,
data mining's flow sizes between random pairs, the total load at 95 %, a
share of the flows with deadlines (at least 5 ms), MCP for them and DCTCP
for the others, 60 s of virtual time; Karuna against DCTCP and
deadline-aware schemes by the deadline miss rate and the non-deadline
flows' FCT (mean, p95).  What we chose (sim/ns3/README.md, "Karuna's
mode", has the reasons):

- the leaf-spine of the other grids (3 leaves of 4 hosts, 2 spines: a
  run of the 144 hosts costs hours, sim/ns3/README.md), --leaves,
  --hosts-per-leaf and --spines give the paper's;
- the types: a third of the flows each by default (--shares), as the
  testbed's Karuna runs, not the paper's rule that makes a new flow a
  deadline flow while the deadline flows in flight ask for less than a
  share of the capacity;
- a deadline: the time the flow's bytes take at a quarter of its host's
  link, at least 5 ms (awafs-ns3 --deadline-ms, --deadline-rate);
- MCP as the host agent's awafs_mcp (sim/ns3/tcp-mcp.h: DCTCP's window,
  paced at 5/4 of what is left over the time left, the deadline given up
  once passed), DCTCP for the other flows and in the schemes without it;
- every flow tags its bytes with its Karuna word, read with trust=host (a
  switch that counts does not take a deadline on trust); the ports mark
  by each queue's backlog (--ecn-mode queue) and the hosts' NICs run the
  scheme too (--nic-queue port): with marks by the port's backlog queue 0's
  DCTCP flows slow down for the packets below them.

Schemes: dctcp (one FIFO queue), deadline-on-top (queue 0 for deadline
flows, one FIFO queue for the rest), karuna-static (8 queues, the
thresholds of sim/karuna_thresholds.py for the workload, the load and the
shares), karuna-adaptive (learned from those, RefPct 10, 20, ..., 60
for both sets), all with DCTCP for every flow; and karuna-mcp
(karuna-static with MCP for the deadline flows: Karuna proper).

One run per (scheme, seed), resumable, kept as in sim/ns3_grid.py: each
run's flows gzipped in OUT (SCHEME-seedN.csv.gz, its summary line beside
it), OUT/flows.sha256 their checksums, OUT/summary.md the tables, with 95 %
bootstrap intervals (resampled within each seed, a random stream per
interval).

    python -m sim.ns3_karuna --out build/eval-sim-karuna  (make eval-sim-karuna)
"""

import argparse
import sys
from pathlib import Path

from eval.static_sweep import (P99_MIN_FLOWS, interval_rng, mean_ci, pooled,
                               ratio_ci)
from sim.karuna_thresholds import parse_shares, solve, thresholds
from sim.ns3_eval import NS3, read_flows
from sim.ns3_grid import (CHECKSUMS, checksums, keep_regime, run_all,
                          run_kept)
from testbed import markdown
from testbed.micro import percentile
from testbed.workload import load_cdf, workloads_dir

REPO = Path(__file__).resolve().parent.parent
QUEUES = 8
ONE_QUEUE = 4294967295
SMALL = 100000              # Small flows, as the literature counts them.
DEADLINE, SIZED, UNKNOWN = 1, 2, 3
# The paper's comparison: Karuna against the deadline-aware schemes.
AGAINST = "deadline-on-top"


def csv(values):
    return ",".join(map(str, values))


def schemes(workload, load, shares):
    """{scheme: awafs-ns3's options} for 'workload' at 'load' with the
    types' 'shares' (as eval/run.py karuna_schemes())."""
    phi, theta, _ = solve(QUEUES - 1, load, shares)
    points = load_cdf(workloads_dir() / f"{workload}.cdf")
    karuna = ["--karuna", "on", "--queues", QUEUES,
              "--thresholds", csv(thresholds(points, theta, shares[2])),
              "--size-thresholds", csv(thresholds(points, phi, shares[1]))]
    refpct = csv(range(10, 10 * (QUEUES - 1), 10))
    return {
        "dctcp": ["--scheme", "fifo", "--queues", 2],
        "deadline-on-top": ["--karuna", "on", "--queues", 3,
                            "--scheme", "static", "--thresholds", ONE_QUEUE,
                            "--size-thresholds", ONE_QUEUE],
        "karuna-static": [*karuna, "--scheme", "static"],
        "karuna-adaptive": [*karuna, "--scheme", "awafs",
                            "--percentiles", refpct,
                            "--size-percentiles", refpct],
        "karuna-mcp": [*karuna, "--scheme", "static",
                       "--deadline-transport", "mcp"],
    }


def tag(scheme, seed):
    return f"{scheme}-seed{seed}"


def classes(rows, warmup_s):
    """{class: [FCT (ms)]} of the flows that started at 'warmup_s' or later
    and completed, by Karuna's type (2, 3), the type 3 flows of at most
    SMALL bytes, and the non-deadline flows together; and {1: [1 if the
    deadline flow missed its deadline or did not complete, else 0]}."""
    out = {"type 2": [], "type 3": [], "type 3 small": [], "non-deadline": [],
           "missed": []}
    for r in rows:
        if r["start_s"] < warmup_s:
            continue
        if r["type"] == DEADLINE:
            out["missed"].append(
                100 * (r["fct_ms"] is None or r["fct_ms"] > r["deadline_ms"]))
        elif r["fct_ms"] is not None:
            out["non-deadline"].append(r["fct_ms"])
            out[f"type {r['type']}"].append(r["fct_ms"])
            if r["type"] == UNKNOWN and r["size"] <= SMALL:
                out["type 3 small"].append(r["fct_ms"])
    return out


def ci_cell(groups, *what):
    if not pooled(groups):
        return "-"
    mean, (lo, hi) = mean_ci(groups, interval_rng("karuna", *what))
    return f"{mean:.2f} [{lo:.2f}, {hi:.2f}]"


def summary(out, names, seeds, warmup_s, regime):
    # {scheme: {seed: classes}}
    kept = {}
    for s in names:
        for seed in seeds:
            path = out / f"{tag(s, seed)}.csv.gz"
            if path.exists():
                kept.setdefault(s, {})[seed] = classes(read_flows(path),
                                                       warmup_s)
    if not kept:
        return "No run kept yet.\n"

    def groups(s, c):
        return {seed: k[c] for seed, k in kept[s].items() if k[c]}

    lines = ["# Karuna's simulation on ns-3 (seed 003, §8.2.1)", "",
             f"`{regime}`", "",
             "Deadline flows missed (finished after their deadline, or "
             "not at all), and the non-deadline flows' FCT (ms) by type: "
             "type 2 says its size, type 3 does not (small: at most "
             f"{SMALL // 1000} KB); pooled over the seeds, flows that "
             f"started in a run's first {warmup_s:g} s left out; 95 % "
             "bootstrap intervals (resampled within each seed); the "
             "non-deadline flows' p95 nearest-rank where at least "
             f"{P99_MIN_FLOWS} are pooled, else their maximum.", "",
             *markdown.head(["scheme", "seeds", "deadline flows",
                             "missed % [95 % CI]", "type 2 mean",
                             "type 3 mean", "type 3 small mean",
                             "non-deadline p95"])]
    for s in kept:
        missed = groups(s, "missed")
        every = pooled(groups(s, "non-deadline"))
        p95 = ("-" if not every
               else f"{percentile(every, 0.95):.2f}"
               if len(every) >= P99_MIN_FLOWS else f"max {max(every):.2f}")
        lines.append(markdown.row([
            s, str(len(kept[s])), str(len(pooled(missed))),
            ci_cell(missed, s, "missed"),
            *(ci_cell(groups(s, c), s, c)
              for c in ("type 2", "type 3", "type 3 small")), p95]))
    if AGAINST in kept:
        lines += ["", f"Against {AGAINST} (the same flows): the change of "
                  "each class's mean FCT, with its 95 % interval.", "",
                  *markdown.head(["scheme", "type 2", "type 3",
                                  "type 3 small", "non-deadline"])]
        for s in kept:
            if s == AGAINST:
                continue
            cells = []
            for c in ("type 2", "type 3", "type 3 small", "non-deadline"):
                a, b = groups(s, c), groups(AGAINST, c)
                common = {k: a[k] for k in a if k in b}
                if not common:
                    cells.append("-")
                    continue
                pct, (lo, hi) = ratio_ci(
                    common, {k: b[k] for k in common},
                    interval_rng("karuna", s, c, AGAINST))
                cells.append(f"{pct:+.1f} % [{lo:+.1f}, {hi:+.1f}]")
            lines.append(markdown.row([s, *cells]))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--workload", default="datamining",
                    help="a CDF of ../shared/workloads (the paper's: "
                    "datamining)")
    ap.add_argument("--load", type=float, default=0.8,
                    help="of the host links (the paper's: 0.95)")
    ap.add_argument("--flows", type=int, default=2000,
                    help="flows a run")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--shares", default="1/3,1/3,1/3",
                    help="of the flows with a deadline, a size, neither")
    ap.add_argument("--leaves", type=int, default=3)
    ap.add_argument("--hosts-per-leaf", type=int, default=4)
    ap.add_argument("--spines", type=int, default=2)
    ap.add_argument("--schemes",
                    default="dctcp,deadline-on-top,karuna-static,"
                    "karuna-adaptive,karuna-mcp")
    ap.add_argument("--warmup-s", type=float, default=0.0,
                    help="leave out the flows that started this early")
    ap.add_argument("--jobs", type=int, default=1,
                    help="runs at a time (each takes one core)")
    ap.add_argument("--summary-only", action="store_true")
    args = ap.parse_args(argv)

    if not NS3.exists():
        sys.exit(f"ns3_karuna: {NS3} not built (make ns3)")
    try:
        shares = parse_shares(args.shares)
    except ValueError as e:
        ap.error(f"--shares: {e}")
    if not 0 < args.load < 1:
        ap.error("--load must be in (0, 1)")
    options = schemes(args.workload, args.load, shares)
    names = args.schemes.split(",")
    for s in names:
        if s not in options:
            ap.error(f"--schemes: unknown scheme {s}")
    cdf = workloads_dir() / f"{args.workload}.cdf"
    common = ["--topology", "leaf-spine", "--leaves", args.leaves,
              "--hosts-per-leaf", args.hosts_per_leaf,
              "--spines", args.spines, "--transport", "dctcp",
              "--trust", "host", "--ecn-mode", "queue",
              "--nic-queue", "port", "--workload", cdf.name,
              "--load", args.load, "--flows", args.flows,
              "--deadline-share", f"{shares[0]:.6g}",
              "--sized-share", f"{shares[1]:.6g}"]
    regime_args = [str(a) for a in common]
    keep_regime(args.out, regime_args, "ns3_karuna")
    seeds = range(1, args.seeds + 1)
    pts = [(s, seed) for seed in seeds for s in names]
    if not args.summary_only:
        run_args = [str(cdf) if a == cdf.name else a for a in regime_args]
        run_all(pts, lambda p: (args.out / f"{tag(*p)}.csv.gz").exists(),
                lambda p: run_kept(args.out, tag(*p),
                                   [*run_args, "--seed", p[1],
                                    *options[p[0]]]), args.jobs)
    regime = f"{NS3.name} {' '.join(regime_args)} --seed S --scheme ..."
    text = summary(args.out, names, seeds, args.warmup_s, regime)
    (args.out / "summary.md").write_text(text)
    (args.out / CHECKSUMS).write_text(checksums(args.out))
    print(text, end="")


if __name__ == "__main__":
    main()

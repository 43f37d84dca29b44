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
  paced at 5/4 of what is left over the time left less an 8th of the
  deadline, the deadline given up once passed), DCTCP for the other
  flows and in the schemes without it;
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
(karuna-static with MCP for the deadline flows: Karuna proper).  For
the paper's aging (Fig. 14), karuna-aging-off and karuna-aging-on:
karuna-static with the switch's count (--trust switch, which takes a
deadline for the size it declares, as the testbed's aging runs) without
and with aging (a message ages at its kappa-th timeout, kappa uniform in
[2, 10] per flow); they see timeouts at the testbed's rate (--rate 100M)
with the Long Flow workload (--workload longflow, eval/workloads/).

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

from eval.experiments import cdf_path
from eval.karuna_pool import AGING_CLASSES, caption, classes, tables
from sim.karuna_thresholds import parse_shares, solve, thresholds
from sim.ns3_eval import NS3, read_flows
from sim.ns3_grid import (CHECKSUMS, checksums, keep_regime, run_all,
                          run_kept)
from testbed.workload import load_cdf

REPO = Path(__file__).resolve().parent.parent
QUEUES = 8
ONE_QUEUE = 4294967295
AGING = ("karuna-aging-off", "karuna-aging-on")   # The second ages.


def csv(values):
    return ",".join(map(str, values))


def schemes(workload, load, shares):
    """{scheme: awafs-ns3's options} for 'workload' at 'load' with the
    types' 'shares' (as eval/run.py karuna_schemes())."""
    phi, theta, _ = solve(QUEUES - 1, load, shares)
    points = load_cdf(cdf_path(workload))
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
        # Aging needs the switch's count, which takes a deadline for the
        # size it declares: the testbed's aging runs (eval/run.py).
        **{s: [*karuna, "--scheme", "static", "--trust", "switch",
               "--aging", s.rsplit("-", 1)[1]] for s in AGING},
    }


def tag(scheme, seed):
    return f"{scheme}-seed{seed}"


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
    aging = {s: kept.pop(s) for s in AGING if s in kept}
    lines = ["# Karuna's simulation on ns-3 (seed 003, §8.2.1)", "",
             f"`{regime}`", "", caption(warmup_s)]
    if kept:
        lines += ["", *tables(kept)]
    if aging:
        lines += ["", "## Aging (the paper's Fig. 14)", "",
                  *tables(aging, AGING[0], AGING_CLASSES)]
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
    ap.add_argument("--rate", help="every host link's (awafs-ns3's "
                    "default, 10G; 100M: the testbed's)")
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
    cdf = cdf_path(args.workload)
    common = ["--topology", "leaf-spine", "--leaves", args.leaves,
              "--hosts-per-leaf", args.hosts_per_leaf,
              "--spines", args.spines, "--transport", "dctcp",
              "--trust", "host", "--ecn-mode", "queue",
              "--nic-queue", "port", "--workload", cdf.name,
              "--load", args.load, "--flows", args.flows,
              "--deadline-share", f"{shares[0]:.6g}",
              "--sized-share", f"{shares[1]:.6g}"]
    if args.rate:
        common += ["--rate", args.rate]
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

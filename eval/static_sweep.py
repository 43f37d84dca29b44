"""The micro benchmark against the best static threshold in hindsight, over
seeds, with confidence intervals (issues 32 and 33).

    python3 -m eval.static_sweep [--seeds 5] [--flows 500] [--load BPS]
                                 [--thresholds 5000,10000,...] [--out DIR]
    python3 -m eval.static_sweep --report CSV[.gz] [the run's options]

The micro benchmark (testbed/micro.py: nginx, 80 % 10 kB / 20 % 1000 kB
responses, two queues, DCTCP with ECN at the port) offered --load into a
port shaped to 100 Mbit/s, under FIFO, a static threshold for each of
--thresholds, AWAFS with RefPct 10 (from 1000 kB) and AWAFS with
percentiles=auto, for seeds 1..--seeds; a seed gives every scheme the same
arrivals and sizes, and seeds differ in both.

The best static threshold in hindsight is the one with the lowest short-flow
mean pooled over the seeds.  AWAFS starts each run from 1000 kB and learns
its threshold once the window holds min-samples completions: the flows that
start in a run's first WARMUP_S seconds are compared again without it.  Picking it after the fact favours it: where
several thresholds separate the two sizes equally well, the luckiest one
wins, so the comparison leans against AWAFS.

Confidence intervals are 95 % bootstrap intervals (BOOTSTRAP resamples):
each resample draws, within each seed, as many flows as that seed had,
with replacement, so seeds keep their weight.  A ratio of two schemes is
resampled the same way for both, independently.  p99 is given only where a
class has at least 1,000 flows pooled; else the maximum, marked so.

Writes DIR/static-sweep.csv (a row per flow: scheme, seed, size, start,
FCT, and the load its run carried) and DIR/static-sweep.md, and prints the report;
--report derives the report again from a kept CSV."""

import argparse
import csv
import gzip
import random
import statistics
import sys
from pathlib import Path

from testbed.micro import (LONG, SHORT, MicroBench, p99, timed, write_rows,
                           write_study)

REPO = Path(__file__).resolve().parent.parent
RATE = 100000000
BOOTSTRAP = 2000
P99_MIN_FLOWS = 1000
WARMUP_S = 2
THRESHOLDS = [5000, 10000, 11000, 20000, 100000, 1000000]


def schemes(thresholds):
    """[(name, micro scheme, extra keys)] in the report's order."""
    return ([("fifo", "fifo", None)]
            + [(f"static-{t}", "static-1KB", {"thresholds": t})
               for t in thresholds]
            + [("awafs-pct10", "awafs-pct10", None),
               ("awafs-auto", "awafs-auto", None)])


def read_rows(path):
    """The flows of a kept run (the CSV, gzipped or not, that a run
    writes), as report() takes them."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        return [{"scheme": r["scheme"], "seed": int(r["seed"]),
                 "size": int(r["size"]), "start_s": float(r["start_s"]),
                 "fct_ms": float(r["fct_ms"]),
                 "carried_mbps": float(r["carried_mbps"])}
                for r in csv.DictReader(f)]


def by_seed(rows, scheme, size, after=0):
    """{seed: [FCT ms]} of the scheme's flows of 'size' that started
    'after' seconds into their run or later."""
    out = {}
    for r in rows:
        if r["scheme"] == scheme and r["size"] == size and \
                r["start_s"] >= after:
            out.setdefault(r["seed"], []).append(r["fct_ms"])
    return out


def pooled(groups):
    return [v for g in groups.values() for v in g]


def resample_mean(groups, rng):
    total = n = 0
    for values in groups.values():
        total += sum(rng.choices(values, k=len(values)))
        n += len(values)
    return total / n


def interval(samples):
    s = sorted(samples)
    return s[int(0.025 * len(s))], s[int(0.975 * len(s)) - 1]


def interval_rng(*what):
    """The random stream of one interval's bootstrap, seeded by what the
    interval is of (its class, scheme, point, reference): an interval then
    depends on its own flows alone, and a report that gains or loses a row
    keeps every other row's interval (one stream shared by the rows in turn
    moved them all)."""
    return random.Random("/".join(map(str, what)))


def mean_ci(groups, rng):
    """(pooled mean, 95 % interval)."""
    return (statistics.mean(pooled(groups)),
            interval([resample_mean(groups, rng) for _ in range(BOOTSTRAP)]))


def ratio_ci(a, b, rng):
    """(mean(a) / mean(b) - 1, its 95 % interval), in %."""
    point = statistics.mean(pooled(a)) / statistics.mean(pooled(b)) - 1
    lo, hi = interval([resample_mean(a, rng) / resample_mean(b, rng) - 1
                       for _ in range(BOOTSTRAP)])
    return 100 * point, (100 * lo, 100 * hi)


def tail(values):
    """p99 if there are enough flows for one, else the maximum."""
    if len(values) >= P99_MIN_FLOWS:
        return f"{p99(values):.2f}"
    return f"max {max(values):.2f}"


def report(rows, args):
    names = [name for name, _, _ in schemes(args.thresholds)]
    short = {n: by_seed(rows, n, SHORT) for n in names}
    steady = {n: by_seed(rows, n, SHORT, WARMUP_S) for n in names}
    long_ = {n: by_seed(rows, n, LONG) for n in names}
    statics = [n for n in names if n.startswith("static-")]
    best = min(statics, key=lambda n: statistics.mean(pooled(short[n])))
    seeds = sorted({r["seed"] for r in rows})
    out = ["# The micro benchmark against the best static threshold in "
           "hindsight", "",
           f"`python3 -m eval.static_sweep --seeds {args.seeds} --flows "
           f"{args.flows} --load {args.load:.0f} --thresholds "
           f"{','.join(map(str, args.thresholds))}`", "",
           f"{args.flows} flows a run (80 % 10 kB, 20 % 1000 kB) from "
           f"nginx, offered {args.load / 1e6:.0f} Mbit/s into a port shaped "
           f"to {RATE / 1e6:.0f} Mbit/s, two queues, DCTCP with ECN at the "
           f"port; seeds {seeds[0]}–{seeds[-1]}, each scheme on the same "
           "arrivals for a seed. Means pooled over the seeds, with 95 % "
           f"bootstrap intervals ({BOOTSTRAP} resamples of the flows within "
           "each seed, from a random stream of each interval's own); p99 "
           f"where a class has at least {P99_MIN_FLOWS} "
           "flows pooled, else the maximum.", "",
           "| scheme | short flows | short mean (ms) [95 % CI] | short "
           "p99 (ms) | short mean vs best static [95 % CI] | the same, "
           f"flows from {WARMUP_S} s on | long mean (ms) [95 % CI] | long "
           "vs FIFO [95 % CI] | carried (Mbit/s) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        if not short[n]:
            continue
        sm, (slo, shi) = mean_ci(short[n], interval_rng("short", n))
        lm, (llo, lhi) = mean_ci(long_[n], interval_rng("long", n))
        vb, (blo, bhi) = ratio_ci(short[n], short[best],
                                  interval_rng("short", n, best))
        vs, (vlo, vhi) = ratio_ci(steady[n], steady[best],
                                  interval_rng("steady", n, best))
        vf, (flo, fhi) = ratio_ci(long_[n], long_["fifo"],
                                  interval_rng("long", n, "fifo"))
        carried = statistics.mean({r["seed"]: r["carried_mbps"]
                                   for r in rows if r["scheme"] == n}
                                  .values())
        mark = " (best)" if n == best else ""
        out.append(f"| {n}{mark} | {len(pooled(short[n]))} | {sm:.3f} "
                   f"[{slo:.3f}, {shi:.3f}] | {tail(pooled(short[n]))} | "
                   f"{vb:+.1f} % [{blo:+.1f}, {bhi:+.1f}] | {vs:+.1f} % "
                   f"[{vlo:+.1f}, {vhi:+.1f}] | {lm:.1f} "
                   f"[{llo:.1f}, {lhi:.1f}] | {vf:+.1f} % [{flo:+.1f}, "
                   f"{fhi:+.1f}] | {carried:.1f} |")
    return "\n".join(out) + "\n"


def parse_args(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--flows", type=int, default=500)
    ap.add_argument("--load", type=float, default=80e6)
    ap.add_argument("--thresholds", default=THRESHOLDS,
                    type=lambda s: [int(t) for t in s.split(",")])
    ap.add_argument("--out", default=str(REPO / "build" / "static-sweep"))
    ap.add_argument("--report", metavar="CSV")
    return ap.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if args.report:
        print(report(read_rows(args.report), args), end="")
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    bench = MicroBench("dctcp")
    try:
        for seed in range(1, args.seeds + 1):
            for name, scheme, extra in schemes(args.thresholds):
                res = timed(f"seed {seed} {name}", lambda: bench.measure(
                    scheme, args.flows, int(args.load), RATE, seed=seed,
                    extra=extra))
                carried = res.carried_bps() / 1e6
                rows += [{"scheme": name, "seed": seed, "size": int(r["size"]),
                          "start_s": float(r["start_s"]),
                          "fct_ms": int(r["fct_us"]) / 1000,
                          "carried_mbps": round(carried, 2)}
                         for r in res.rows]
            write_rows(out / "static-sweep.csv", rows)  # Kept per seed.
    finally:
        bench.close()
    write_study(out, "static-sweep", rows, report(rows, args))


if __name__ == "__main__":
    main(sys.argv[1:])

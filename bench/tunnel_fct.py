"""A tenant's traffic through a tunnel against the same traffic without one
(issue 29): the micro benchmark (testbed/micro.py: nginx, real TCP, DCTCP,
a port shaped to 100 Mbit/s) on the tunnelled hypervisor of
testbed/tunnel.py and on the plain one, under AWAFS (RefPct 10) and under
FIFO, with the same arrivals and sizes, seed by seed; the four runs of a
seed alternate (which tunnel and which scheme go first alternate too), so
that a slow stretch of the machine falls on all of them.

    python3 -m bench.tunnel_fct [--kind vxlan|geneve] [--seeds 5]
        [--flows 400] [--load BPS] [--out DIR]

Reports, pooled over the seeds, each run's short-flow mean FCT and two
differences with 95 % bootstrap intervals (resampled within each seed, as
eval/static_sweep.py does):
- AWAFS tunnelled against AWAFS without the tunnel: what a tenant sees;
- AWAFS's gain over FIFO (FIFO's mean minus AWAFS's) tunnelled against
  that gain without the tunnel: what the scheduling does.  A remote end
  that adds the same delay to every flow moves both runs of a tunnel
  alike, so it leaves the gain as it is; a classification that fails
  through the tunnel takes the gain away.
Writes DIR/tunnel-fct-KIND.csv (a row per flow) and DIR/tunnel-fct-KIND.md."""

import argparse
import csv
import random
import statistics
import time
from pathlib import Path

from eval.static_sweep import (BOOTSTRAP, interval, pooled, ratio_ci,
                               resample_mean)
from testbed.micro import SHORT, MicroBench
from testbed.tunnel import KINDS

REPO = Path(__file__).resolve().parent.parent
SCHEME, BASELINE = "awafs-pct10", "fifo"


def run(scheme, tunnel, flows, load, seed):
    """The short flows' FCTs (ms) of one run."""
    bench = MicroBench("dctcp", tunnel=tunnel)
    try:
        result = bench.measure(scheme, flows, load, seed=seed)
    finally:
        bench.close()
    return result.fcts_ms(SHORT)


def gain(fifo, awafs, mean):
    return mean(fifo) - mean(awafs)


def gain_ci(tunnelled, plain, rng):
    """(gain tunnelled / gain without the tunnel - 1, its 95 % interval),
    in %, each {scheme: {seed: FCTs}}."""
    def ratio(mean):
        return (gain(tunnelled[BASELINE], tunnelled[SCHEME], mean)
                / gain(plain[BASELINE], plain[SCHEME], mean) - 1)

    point = ratio(lambda g: statistics.mean(pooled(g)))
    lo, hi = interval([ratio(lambda g: resample_mean(g, rng))
                       for _ in range(BOOTSTRAP)])
    return 100 * point, (100 * lo, 100 * hi)


def report(kind, fcts, args, seconds):
    """The Markdown report of 'fcts' ({(scheme, tunnel): {seed: FCTs}})."""
    t = {s: fcts[(s, kind)] for s in (SCHEME, BASELINE)}
    n = {s: fcts[(s, "none")] for s in (SCHEME, BASELINE)}
    rng = random.Random(1)
    diff, (lo, hi) = ratio_ci(t[SCHEME], n[SCHEME], rng)
    gdiff, (glo, ghi) = gain_ci(t, n, rng)

    def mean(groups, seed=None):
        return statistics.mean(groups[seed] if seed else pooled(groups))

    lines = [f"# Short flows through {kind} against no tunnel", "",
             f"`python3 -m bench.tunnel_fct --kind {kind} --seeds "
             f"{args.seeds} --flows {args.flows} --load {args.load:.0f}` "
             f"({seconds:.0f} s; `tunnel-fct-{kind}.csv`): the micro "
             f"benchmark under {SCHEME} and {BASELINE}, DCTCP, the same "
             "arrivals and sizes per seed, the four runs alternated.", "",
             f"| seed | {SCHEME} {kind} (ms) | {SCHEME} no tunnel (ms) | "
             f"difference | {BASELINE} {kind} (ms) | {BASELINE} no tunnel "
             f"(ms) | gain {kind} (ms) | gain no tunnel (ms) |",
             "|---|---|---|---|---|---|---|---|"]
    for seed in sorted(n[SCHEME]):
        a, b = mean(t[SCHEME], seed), mean(n[SCHEME], seed)
        fa, fb = mean(t[BASELINE], seed), mean(n[BASELINE], seed)
        lines.append(f"| {seed} | {a:.3f} | {b:.3f} | "
                     f"{100 * (a / b - 1):+.1f} % | {fa:.3f} | {fb:.3f} | "
                     f"{fa - a:.3f} | {fb - b:.3f} |")
    a, b = mean(t[SCHEME]), mean(n[SCHEME])
    fa, fb = mean(t[BASELINE]), mean(n[BASELINE])
    lines += [f"| pooled | {a:.3f} | {b:.3f} | {diff:+.1f} % "
              f"[{lo:+.1f}, {hi:+.1f}] | {fa:.3f} | {fb:.3f} | "
              f"{fa - a:.3f} | {fb - b:.3f} |", "",
              f"AWAFS's gain over FIFO through {kind} against without a "
              f"tunnel: **{gdiff:+.1f} % [{glo:+.1f}, {ghi:+.1f}]**.", "",
              "The intervals are 95 % bootstraps, the flows resampled "
              "within each seed. The gain is FIFO's short mean minus "
              f"{SCHEME}'s: a delay the tunnel adds to every flow leaves it "
              "as it is."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=KINDS, default="vxlan")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--flows", type=int, default=400)
    ap.add_argument("--load", type=float, default=50e6)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    fcts = {(s, t): {} for s in (SCHEME, BASELINE)
            for t in (args.kind, "none")}
    for seed in range(1, args.seeds + 1):
        tunnels = [args.kind, None] if seed % 2 else [None, args.kind]
        schemes = [SCHEME, BASELINE] if seed % 4 < 2 else [BASELINE, SCHEME]
        for tunnel in tunnels:
            for scheme in schemes:
                key = (scheme, tunnel or "none")
                fcts[key][seed] = run(scheme, tunnel, args.flows, args.load,
                                      seed)
                print(f"seed {seed} {scheme} {key[1]}: short mean "
                      f"{statistics.mean(fcts[key][seed]):.3f} ms",
                      flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    name = f"tunnel-fct-{args.kind}"
    with open(args.out / f"{name}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scheme", "tunnel", "seed", "fct_ms"])
        for (scheme, tunnel), groups in fcts.items():
            for seed, values in groups.items():
                w.writerows([scheme, tunnel, seed, v] for v in values)
    text = report(args.kind, fcts, args, time.monotonic() - t0)
    (args.out / f"{name}.md").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()

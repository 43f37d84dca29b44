"""A tenant's traffic through a tunnel against the same traffic without one
(issue 29): the micro benchmark (testbed/micro.py: nginx, real TCP, DCTCP,
AWAFS RefPct 10 on a port shaped to 100 Mbit/s) on the tunnelled
hypervisor of testbed/tunnel.py and on the plain one, with the same
arrivals and sizes, seed by seed, the two alternated (which goes first
alternates too), so that a slow stretch of the machine falls on both.

    python3 -m bench.tunnel_fct [--kind vxlan|geneve] [--seeds 5]
        [--flows 400] [--load BPS] [--out DIR]

Reports the short flows' mean FCT of each, pooled over the seeds, and the
tunnelled run's difference with a 95 % bootstrap interval (resampled
within each seed, eval/static_sweep.py's ratio_ci()).  Writes
DIR/tunnel-fct-KIND.csv (a row per flow) and DIR/tunnel-fct-KIND.md."""

import argparse
import csv
import random
import statistics
import time
from pathlib import Path

from eval.static_sweep import pooled, ratio_ci
from testbed.micro import SHORT, MicroBench
from testbed.tunnel import KINDS

REPO = Path(__file__).resolve().parent.parent
SCHEME = "awafs-pct10"


def run(tunnel, flows, load, seed):
    """The short flows' FCTs (ms) of one run."""
    bench = MicroBench("dctcp", tunnel=tunnel)
    try:
        result = bench.measure(SCHEME, flows, load, seed=seed)
    finally:
        bench.close()
    return result.fcts_ms(SHORT)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=KINDS, default="vxlan")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--flows", type=int, default=400)
    ap.add_argument("--load", type=float, default=50e6)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    fcts = {args.kind: {}, "none": {}}
    for seed in range(1, args.seeds + 1):
        order = [args.kind, None] if seed % 2 else [None, args.kind]
        for tunnel in order:
            fcts[tunnel or "none"][seed] = run(tunnel, args.flows,
                                               args.load, seed)
            print(f"seed {seed} {tunnel or 'none'}: short mean "
                  f"{statistics.mean(fcts[tunnel or 'none'][seed]):.3f} ms",
                  flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    name = f"tunnel-fct-{args.kind}"
    with open(args.out / f"{name}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["tunnel", "seed", "fct_ms"])
        for tunnel, groups in fcts.items():
            for seed, values in groups.items():
                w.writerows([tunnel, seed, v] for v in values)

    diff, (lo, hi) = ratio_ci(fcts[args.kind], fcts["none"],
                              random.Random(1))
    lines = [f"# Short flows through {args.kind} against no tunnel", "",
             f"`python3 -m bench.tunnel_fct --kind {args.kind} --seeds "
             f"{args.seeds} --flows {args.flows} --load {args.load:.0f}` "
             f"({time.monotonic() - t0:.0f} s; `{name}.csv`): the micro "
             f"benchmark under {SCHEME}, DCTCP, the same arrivals and sizes "
             "per seed, the two alternated.", "",
             f"| seed | {args.kind} short mean (ms) | no tunnel (ms) | "
             "difference |", "|---|---|---|---|"]
    for seed in fcts["none"]:
        a = statistics.mean(fcts[args.kind][seed])
        b = statistics.mean(fcts["none"][seed])
        lines.append(f"| {seed} | {a:.3f} | {b:.3f} | "
                     f"{100 * (a / b - 1):+.1f} % |")
    a = statistics.mean(pooled(fcts[args.kind]))
    b = statistics.mean(pooled(fcts["none"]))
    lines += [f"| pooled | {a:.3f} | {b:.3f} | {diff:+.1f} % "
              f"[{lo:+.1f}, {hi:+.1f}] |", "",
              "The interval is a 95 % bootstrap of the pooled difference, "
              "the flows resampled within each seed."]
    text = "\n".join(lines) + "\n"
    (args.out / f"{name}.md").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()

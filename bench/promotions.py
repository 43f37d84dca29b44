"""How often rising thresholds would move a backlogged message's later
segments above its queued ones (issue 11, point 9), on the micro benchmark:
real TCP (DCTCP), nginx, 80 % load on a 100 Mbit/s port, AWAFS RefPct 10
learning from a mismatched threshold: 1000 kB (the thresholds fall) or 1 kB
(they rise, the case that promotes).  With trust=verify the switch's flow
table keeps each message in its queue and counts the segments it held down
(`switch-held-down`); with trust=host the same segments would have been
promoted.

    build/venv/bin/python -m bench.promotions [--flows 800] [--from 1KB]
"""

import argparse

from testbed import micro


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=800)
    ap.add_argument("--from", dest="start", choices=["1000KB", "1KB"],
                    default="1KB")
    args = ap.parse_args()
    scheme = ("awafs-pct10" if args.start == "1000KB"
              else "awafs-pct10-from-1KB")
    micro.SCHEMES["awafs-pct10-verify"] = {**micro.SCHEMES[scheme],
                                           "trust": "verify"}
    bench = micro.MicroBench("dctcp")
    try:
        result = bench.measure("awafs-pct10-verify", args.flows, 80e6)
        stats = bench.port_stats
    finally:
        bench.close()
    s = result.summary()
    print(f"from {args.start}: flows {len(result.rows)}, "
          f"segments sent {stats['sent']}, "
          f"held down {stats['held_down']} "
          f"({100 * stats['held_down'] / max(stats['sent'], 1):.3f} %), "
          f"short-flow mean FCT {s['short_mean']:.2f} ms, "
          f"threshold median {s['thr_median']:.0f}")


if __name__ == "__main__":
    main()

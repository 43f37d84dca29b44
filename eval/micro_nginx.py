"""The thesis's micro benchmark (§5.3) with real servers: flow completion
times through the patched switch under FIFO, static and adaptive MLFQ.

    python3 -m eval.micro_nginx [--flows N] [--load BPS] [--rate BPS]
                                [--seed S] [--transport T] [--out DIR]

Set-up: testbed/micro.py (nginx on two senders with the host agent, the
load generator on the receiver, the awafs port toward it shaped to --rate,
offered --load).  Schemes: one queue (FIFO: two queues, everything below
one threshold), static MLFQ with the matched threshold (10 kB) and a
mismatched one (1000 kB), and adaptive AWAFS from 1000 kB with the thesis's
RefPct (10) and with another percentile (70).

Transport (testbed/transport.py): cubic unless --transport says another.

Writes DIR/micro-nginx.csv (one row per flow and scheme, with the transport
its sockets ran) and prints a
markdown table: mean and p99 FCT of short and long flows, and the
threshold sampled while each scheme ran."""

import argparse
import sys
import time
from pathlib import Path

from testbed.micro import (LONG, SHORT, MicroBench,
                           markdown_table, write_csv)

REPO = Path(__file__).resolve().parent.parent

SCHEMES = ["fifo", "static-1000KB", "static-10KB", "awafs-pct10",
           "awafs-pct70"]


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=3000)
    ap.add_argument("--load", type=float, default=55e6)
    ap.add_argument("--rate", type=int, default=100000000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--transport", default="cubic")
    ap.add_argument("--out", default=str(REPO / "build" / "eval"))
    args = ap.parse_args(argv)
    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)

    bench = MicroBench(args.transport)
    results = []
    try:
        for name in SCHEMES:
            t0 = time.time()
            results.append(bench.measure(name, args.flows, args.load, args.rate,
                                     args.seed, sample_s=1.0))
            print(f"{name}: {args.flows} flows in {time.time() - t0:.0f} s",
                  file=sys.stderr, flush=True)
    finally:
        bench.close()

    write_csv(outdir / "micro-nginx.csv", results)
    print(f"micro benchmark through nginx: {args.flows} flows, 80 % "
          f"{SHORT // 1000} kB / 20 % {LONG // 1000} kB, offered "
          f"{args.load / 1e6:.0f} Mbit/s, port shaped to "
          f"{args.rate / 1e6:.0f} Mbit/s, seed {args.seed}, "
          f"{results[0].transport['server_cc']}\n")
    print(markdown_table(results))


if __name__ == "__main__":
    main(sys.argv[1:])

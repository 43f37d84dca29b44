"""TFS's packet-level simulation (seed 004, §5) on ns-3, with the unchanged
core on every switch port: build/bin/awafs-ns3 --topology fat-tree.

The letter's set-up: a 3-tier fat-tree of 54 servers (k = 6) with 10 Gbit/s
links and 240 us RTTs, 22.5 KB of buffer per switch port, TCP NewReno,
ECMP; queries of 20 or 80 KB, each answered by 10 random servers, at about
10 % of the network's throughput, beside background flows of 64 KB to
32 MB between random servers; TFS (the switches put retransmitted
segments first, by strict priority) against FCFS, by the mean and 99.9th
percentile query response time.  What the letter leaves open, and what
we chose (sim/ns3/README.md has the reasons):

- the buffer is in packets here: 15 (22.5 KB of full frames);
- the background's sizes: log-uniform from 64 KB to 32 MB
  (sim/ns3/tfs-background.cdf), its load 50 % of the host links;
- an answer is 1/10 of its query's size, sent at once by each of the 10
  servers to the aggregator on a new connection; the query's response time
  is from then to the last answer's last byte;
- the minimum RTO, which the letter does not give either: Linux's 200 ms
  (--min-rto-ms), and a lost SYN waits as long (awafs-ns3 --syn-rto-ms:
  the letter's 99.9th percentiles, 82-334 ms, hold no wait of Linux's 1 s
  or ns-3's 3 s for a SYN);
- schemes, two queues on every switch port: fifo (FCFS: everything in
  queue 0), acks-first (data in queue 1: only the switch's rule for
  segments without payload, which go to queue 0 within a budget, so that
  TFS's own effect can be told from it), tfs (the flow table's tardy flows
  in queue 0, the switch's tardy=tfs), tfs+ (tardy=tfs+, while under
  100 kB) and tfs-switch (tfs with the budgets the switch gives each
  source in queue 0, awafs-ns3 --source-budgets on; the letter's TFS has
  none).

One run per (scheme, seed), resumable, kept as in sim/ns3_grid.py: each
run's flows gzipped in OUT (SCHEME-seedN.csv.gz, its summary line beside
it), OUT/flows.sha256 their checksums, OUT/summary.md the tables, with 95 %
bootstrap intervals (resampled within each seed, a random stream per
interval).

    python -m sim.ns3_tfs --out build/eval-sim-tfs     (make eval-sim-tfs)
"""

import argparse
import statistics
import sys
from pathlib import Path

from eval.static_sweep import (P99_MIN_FLOWS, interval_rng, mean_ci, pooled,
                               ratio_ci)
from sim.ns3_eval import NS3, read_flows
from sim.ns3_grid import (CHECKSUMS, checksums, keep_regime, run_all,
                          run_kept)
from testbed import markdown
from testbed.micro import percentile

REPO = Path(__file__).resolve().parent.parent
BACKGROUND = REPO / "sim" / "ns3" / "tfs-background.cdf"
SCHEMES = {
    "fifo": ["--scheme", "fifo"],
    "acks-first": ["--scheme", "static", "--thresholds", "0"],
    "tfs": ["--scheme", "static", "--thresholds", "0", "--tardy", "tfs"],
    "tfs+": ["--scheme", "static", "--thresholds", "0", "--tardy", "tfs+"],
    "tfs-switch": ["--scheme", "static", "--thresholds", "0", "--tardy",
                   "tfs", "--source-budgets", "on"],
}
# The letter's Table 1, ms: query size -> (FCFS mean, TFS mean, FCFS
# p99.9, TFS p99.9).
LETTER = {20000: (2.63, 1.17, 165, 82), 80000: (73.90, 67.27, 334, 300)}
# A quantile needs this many values pooled to be more than the maximum.
MIN_POOLED = {0.99: P99_MIN_FLOWS, 0.999: 10 * P99_MIN_FLOWS}


def tag(scheme, seed):
    return f"{scheme}-seed{seed}"


def queries(rows, warmup_s):
    """{query size: [response time (ms)]} of the queries that started at
    'warmup_s' or later, and the number whose answers did not all
    complete."""
    answers = {}
    for r in rows:
        if r["query"] is not None and r["start_s"] >= warmup_s:
            answers.setdefault(r["query"], []).append(r)
    out, missing = {}, 0
    for flows in answers.values():
        if any(f["fct_ms"] is None for f in flows):
            missing += 1
            continue
        size = sum(f["size"] for f in flows)
        out.setdefault(size, []).append(max(f["fct_ms"] for f in flows))
    return out, missing


def run_stats(txt):
    """The summary line's fields of a kept run."""
    return dict(w.split("=", 1) for w in txt.read_text().split())


def quantile_cell(values, p):
    if len(values) >= MIN_POOLED[p]:
        return f"{percentile(values, p):.2f}"
    return f"max {max(values):.2f}"


def summary(out, schemes, seeds, warmup_s, regime, rto_ms):
    kept = {}           # scheme -> {seed: rows}
    for s in schemes:
        for seed in seeds:
            path = out / f"{tag(s, seed)}.csv.gz"
            if path.exists():
                kept.setdefault(s, {})[seed] = read_flows(path)
    if not kept:
        return "No run kept yet.\n"
    # {scheme: {seed: (response times by size, queries not completed)}}
    parsed = {s: {seed: queries(rows, warmup_s)
                  for seed, rows in runs.items()} for s, runs in kept.items()}
    times = {s: {seed: q[0] for seed, q in runs.items()}
             for s, runs in parsed.items()}
    sizes = sorted({size for t in times.values() for q in t.values()
                    for size in q})
    lines = ["# TFS's simulation on ns-3 (seed 004, §5)", "",
             f"`{regime}`", "",
             "Query response times (ms): from the query's start to its "
             "last answer's last byte, pooled over the seeds, queries that "
             f"started in a run's first {warmup_s * 1e3:g} ms left out; "
             "95 % bootstrap intervals (resampled within each seed); "
             "p99 and p99.9 nearest-rank where at least "
             f"{MIN_POOLED[0.99]} and {MIN_POOLED[0.999]} queries are "
             "pooled, else the maximum; how many took the minimum RTO or "
             "longer (an answer waited for a timeout). Against FIFO: the "
             "change of the mean, with its interval, and FIFO's mean over "
             "the scheme's (the letter's factor of improvement).", "",
             *markdown.head(["query size", "scheme", "seeds", "queries",
                             "mean [95 % CI]", "p99", "p99.9",
                             f"≥ {rto_ms:g} ms",
                             "against FIFO [95 % CI]", "factor",
                             "the letter (FCFS / TFS)"])]
    for size in sizes:
        fifo = {seed: q[size] for seed, q in times.get("fifo", {}).items()
                if size in q}
        for s in schemes:
            groups = {seed: q[size] for seed, q in times.get(s, {}).items()
                      if size in q}
            if not groups:
                continue
            mean, (lo, hi) = mean_ci(groups, interval_rng("tfs", size, s))
            values = pooled(groups)
            against, factor = "", ""
            if s != "fifo" and fifo:
                common = {k: groups[k] for k in groups if k in fifo}
                pct, (plo, phi) = ratio_ci(
                    common, {k: fifo[k] for k in common},
                    interval_rng("tfs", size, s, "fifo"))
                against = f"{pct:+.1f} % [{plo:+.1f}, {phi:+.1f}]"
                factor = (f"{statistics.mean(pooled(fifo)) / mean:.2f}"
                          if len(common) == len(groups) else "")
            letter = LETTER.get(size)
            lines.append(markdown.row([
                f"{size // 1000} KB", s, str(len(groups)), str(len(values)),
                f"{mean:.3f} [{lo:.3f}, {hi:.3f}]",
                quantile_cell(values, 0.99), quantile_cell(values, 0.999),
                f"{100 * sum(v >= rto_ms for v in values) / len(values):.1f}"
                " %", against, factor,
                (f"mean {letter[0]} / {letter[1]}, p99.9 {letter[2]} / "
                 f"{letter[3]}") if letter and s == "tfs" else ""
            ]))
    lines += ["", "Per scheme, over its seeds: the packets the switches "
              "dropped of those the hosts sent (the letter: 7 %), the flows "
              "whose sender retransmitted (tardy; the letter: 24 %), the "
              "mean FCT of the answers that were tardy under FIFO and of "
              "the others (the same flows in every scheme: a scheme's own "
              "tardy flows are other flows), and the background flows' "
              "mean FCT (the cost side).", "",
              *markdown.head(["scheme", "seeds", "loss", "tardy flows",
                              "answers tardy under FIFO: mean (ms)",
                              "other answers: mean (ms)",
                              "background mean (ms)",
                              "queries not completed"])]
    fifo_tardy = {seed: {r["id"] for r in rows if r["tardy"]}
                  for seed, rows in kept.get("fifo", {}).items()}
    for s, runs in kept.items():
        drops = sent = tardy = flows = missing = 0
        answers = {False: [], True: []}
        background = []
        for seed, rows in runs.items():
            st = run_stats(out / f"{tag(s, seed)}.txt")
            was_tardy = fifo_tardy.get(seed)
            drops += int(st["drops"])
            sent += int(st["host_packets"])
            tardy += sum(r["tardy"] for r in rows)
            flows += len(rows)
            missing += parsed[s][seed][1]
            for r in rows:
                if r["fct_ms"] is None or r["start_s"] < warmup_s:
                    continue
                if r["query"] is None:
                    background.append(r["fct_ms"])
                elif was_tardy is not None:
                    answers[r["id"] in was_tardy].append(r["fct_ms"])
        lines.append(markdown.row([
            s, str(len(runs)), f"{100 * drops / sent:.2f} %",
            f"{100 * tardy / flows:.1f} %",
            *(f"{statistics.mean(answers[t]):.3f}" if answers[t] else "-"
              for t in (True, False)),
            f"{statistics.mean(background):.2f}" if background else "-",
            str(missing)]))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=2500,
                    help="queries a run (the background runs as long)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--schemes", default=",".join(SCHEMES))
    ap.add_argument("--load", type=float, default=0.5,
                    help="the background's share of the host links")
    ap.add_argument("--min-rto-ms", type=float, default=200,
                    help="TCP's minimum RTO, and a SYN's (Linux's 200)")
    ap.add_argument("--warmup-s", type=float, default=0.005,
                    help="leave out the queries that started this early")
    ap.add_argument("--jobs", type=int, default=1,
                    help="runs at a time (each takes one core)")
    ap.add_argument("--summary-only", action="store_true")
    args = ap.parse_args(argv)

    if not NS3.exists():
        sys.exit(f"ns3_tfs: {NS3} not built (make ns3)")
    schemes = args.schemes.split(",")
    for s in schemes:
        if s not in SCHEMES:
            ap.error(f"--schemes: unknown scheme {s}")
    common = ["--topology", "fat-tree", "--k", 6, "--transport", "newreno",
              "--queues", 2, "--buffer", 15, "--nic-buffer", 1000,
              "--min-rto-ms", f"{args.min_rto_ms:g}",
              "--syn-rto-ms", f"{args.min_rto_ms:g}",
              "--workload", BACKGROUND.relative_to(REPO), "--load", args.load,
              "--queries", args.queries, "--query-load", 0.1]
    regime_args = [str(a) for a in common]
    keep_regime(args.out, regime_args, "ns3_tfs")
    seeds = range(1, args.seeds + 1)
    pts = [(s, seed) for seed in seeds for s in schemes]
    if not args.summary_only:
        # The CDF's path, relative in grid.json, is the repository's.
        run_args = [str(BACKGROUND) if a == str(BACKGROUND.relative_to(REPO))
                    else a for a in regime_args]
        run_all(pts, lambda p: (args.out / f"{tag(*p)}.csv.gz").exists(),
                lambda p: run_kept(args.out, tag(*p),
                                   [*run_args, "--seed", p[1],
                                    *SCHEMES[p[0]]]), args.jobs)
    regime = f"{NS3.name} {' '.join(regime_args)} --seed S --scheme ..."
    text = summary(args.out, schemes, seeds, args.warmup_s, regime,
                   args.min_rto_ms)
    (args.out / "summary.md").write_text(text)
    (args.out / CHECKSUMS).write_text(checksums(args.out))
    print(text, end="")


if __name__ == "__main__":
    main()

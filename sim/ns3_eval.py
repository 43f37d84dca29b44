"""The thesis's micro benchmark on ns-3 (build/bin/awafs-ns3, sim/ns3/):
the unchanged core on a simulated switch port, each scheme on the same
flows for each seed, and a markdown report of the short and long flows'
mean FCT pooled over the seeds.  By default in the testbed's regime (fast
links, the port shaped to 100 Mbit/s as its max-rate, DCTCP, 50 % load,
500 flows a seed, seeds 1-5, as eval/static_sweep.py's kept run), with the
cross-check of issue 32: each of FIFO, static 1000 kB and RefPct 10 against
the testbed's short-flow mean from eval/results/static-sweep-50.csv.gz.

    python -m sim.ns3_eval --out build/eval-sim    (make eval-sim)

Also the library that runs awafs-ns3 and reads what it writes
(tests/test_ns3_smoke.py)."""

import argparse
import csv
import gzip
import statistics
import subprocess
import sys
from pathlib import Path

from eval.static_sweep import by_seed, pooled, read_rows
from testbed.micro import SHORT, percentile

REPO = Path(__file__).resolve().parent.parent
NS3 = REPO / "build" / "bin" / "awafs-ns3"
# The testbed's run of the same regime, every flow kept, and the names
# its schemes have there.
TESTBED = REPO / "eval" / "results" / "static-sweep-50.csv.gz"
TESTBED_NAMES = {"fifo": "fifo", "static-1000KB": "static-1000000",
                 "awafs": "awafs-pct10"}
# Issue 32: within this share of the testbed's short-flow mean.
AGREE = 0.25

# testbed/micro.py's schemes (two queues, W 1 s, T 200 ms, min-samples 10:
# the program's defaults): FIFO, the static threshold that is FIFO for this
# workload (1000 kB) and the one that matches it (10 kB, as the testbed's
# 10240), RefPct 10 and the FCT model's optimum, both from 1000 kB.
SCHEMES = {
    "fifo": ["--scheme", "fifo"],
    "static-1000KB": ["--scheme", "static", "--thresholds", "1000000"],
    "static-10KB": ["--scheme", "static", "--thresholds", "10240"],
    "awafs": ["--scheme", "awafs", "--percentiles", "10"],
    "auto": ["--scheme", "auto"],
}


def parse_summary(line):
    """The summary line's key=value pairs, numbers as numbers."""
    out = {}
    for word in line.split():
        key, value = word.split("=", 1)
        for conv in (int, float):
            try:
                value = conv(value)
                break
            except ValueError:
                pass
        out[key] = value
    done, total = str(out["flows"]).split("/")
    out["completed"], out["flows"] = int(done), int(total)
    # srpt's ports have none; Karuna's are lists too.
    for key in ("thresholds", "size_thresholds", "karuna_packets"):
        if key in out:
            out[key] = [int(t) for t in str(out[key]).split(",") if t]
    return out


def run_ns3(*args, flows_csv=None, trace_csv=None, check=True,
            timeout=600):
    """Runs awafs-ns3 with 'args'; returns its summary (parse_summary())
    with 'rows' (the flows: dicts of id, size, start_s, fct_ms or None,
    sender, receiver on a fabric, part with a second workload, query and
    tardy with queries, type and deadline_ms with Karuna's types) and
    'trace' (the rounds: time_s, version, window, load, thr as a list, and
    sthr with --karuna) when their files are given."""
    cmd = [str(NS3), *map(str, args)]
    if flows_csv:
        cmd += ["--flows-csv", str(flows_csv)]
    if trace_csv:
        cmd += ["--trace-csv", str(trace_csv)]
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}\n"
                           f"{proc.stdout}{proc.stderr}")
    summary = parse_summary(proc.stdout.strip().splitlines()[-1])
    summary["returncode"] = proc.returncode
    if flows_csv:
        summary["rows"] = read_flows(flows_csv)
    if trace_csv:
        summary["trace"] = read_trace(trace_csv)
    return summary


def read_csv(path):
    """The rows of a CSV file, gzipped if its name ends .gz."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


def read_flows(path):
    """The flows of a --flows-csv file (gzipped if its name ends .gz)."""
    rows = read_csv(path)
    for r in rows:
        r["id"], r["size"] = int(r["id"]), int(r["size"])
        r["sender"] = int(r["sender"])
        for key in ("receiver", "part", "tardy", "type", "deadline_ms"):
            if key in r:
                r[key] = int(r[key])
        if "query" in r:
            r["query"] = int(r["query"]) if r["query"] else None
        r["start_s"] = float(r["start_s"])
        r["fct_ms"] = float(r["fct_ms"]) if r["fct_ms"] else None
    return rows


def read_trace(path):
    rows = read_csv(path)
    for r in rows:
        r["time_s"], r["load"] = float(r["time_s"]), float(r["load"])
        r["version"], r["window"] = int(r["version"]), int(r["window"])
        r["thr"] = [int(v) for k, v in r.items() if k.startswith("thr")]
        r["sthr"] = [int(v) for k, v in r.items() if k.startswith("sthr")]
    return rows


def pooled_mean(rows, short):
    """Mean FCT (ms) of the short (or long) flows of 'rows'."""
    return statistics.mean(r["fct_ms"] for r in rows
                           if (r["size"] == SHORT) == short)


def testbed_short_fcts():
    """{ns-3 scheme name: the testbed's short flows' FCTs (ms), pooled}."""
    rows = read_rows(TESTBED)
    return {name: pooled(by_seed(rows, tb, SHORT))
            for name, tb in TESTBED_NAMES.items()}


def report(results, regime, testbed=None):
    """A markdown table of the runs in 'results' ({scheme: [summary per
    seed]}), pooled over the seeds; and, with 'testbed' ({scheme: its short
    flows' FCTs}), the cross-check against it: the means, and where they
    differ, the quantiles."""
    lines = [f"Micro benchmark on ns-3: {regime}.", "",
             "| scheme | short mean FCT (ms) | long mean FCT (ms) "
             "| final thresholds (bytes), by seed | flows completed |",
             "|---|---|---|---|---|"]
    for name, runs in results.items():
        rows = [r for s in runs for r in s["rows"]]
        thr = " ".join(",".join(map(str, s["thresholds"])) for s in runs)
        lines.append(f"| {name} | {pooled_mean(rows, True):.3f} | "
                     f"{pooled_mean(rows, False):.1f} | {thr} | "
                     f"{sum(s['completed'] for s in runs)}/"
                     f"{sum(s['flows'] for s in runs)} |")
    if testbed:
        lines += ["", "Against the testbed's run of the same regime "
                  f"(`{TESTBED.relative_to(REPO)}`, real TCP through the "
                  "switch, pooled over its five seeds); agreement within "
                  f"{AGREE * 100:.0f} % of the testbed's short-flow mean:", "",
                  "| scheme | ns-3 short mean (ms) | testbed (ms) | ns-3 / "
                  "testbed | within 25 % |", "|---|---|---|---|---|"]
        means = {name: statistics.mean(fcts)
                 for name, fcts in testbed.items()}
        for name, tb in means.items():
            rows = [r for s in results[name] for r in s["rows"]]
            sim = pooled_mean(rows, True)
            lines.append(f"| {name} | {sim:.3f} | {tb:.3f} | "
                         f"{sim / tb:.2f} | "
                         f"{'yes' if abs(sim / tb - 1) <= AGREE else 'no'} |")
        sim_gain = {n: pooled_mean([r for s in results[n] for r in s["rows"]],
                                   True) for n in ("fifo", "awafs")}
        same = ((sim_gain["awafs"] < sim_gain["fifo"])
                == (means["awafs"] < means["fifo"]))
        lines += ["", "RefPct 10 against FIFO, short-flow mean: ns-3 "
                  f"{(sim_gain['awafs'] / sim_gain['fifo'] - 1) * 100:+.0f}"
                  " %, testbed "
                  f"{(means['awafs'] / means['fifo'] - 1) * 100:+.0f} %"
                  f" ({'the same direction' if same else 'opposite'}).", "",
                  "Where the means differ: quantiles of the short flows' "
                  "FCT (ms), ns-3 / testbed:", "",
                  "| scheme | p25 | p50 | p90 | p99 |",
                  "|---|---|---|---|---|"]
        for name, fcts in testbed.items():
            sim = [r["fct_ms"] for s in results[name] for r in s["rows"]
                   if r["size"] == SHORT]
            lines.append(f"| {name} | " + " | ".join(
                f"{percentile(sim, q):.3f} / {percentile(fcts, q):.3f}"
                for q in (0.25, 0.5, 0.9, 0.99)) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True,
                    help="folder for the CSVs and report.md")
    ap.add_argument("--flows", type=int, default=500,
                    help="flows a seed")
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--rate", default="1G",
                    help="the receiver's link (the senders' are 10x)")
    ap.add_argument("--max-rate", default="100M",
                    help="the port's shaper, 0 for none")
    ap.add_argument("--transport", default="dctcp",
                    help="newreno, cubic or dctcp (the thesis's regime, "
                    "with ECN marking at the port)")
    args = ap.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    common = ["--flows", args.flows, "--load", args.load, "--rate",
              args.rate, "--max-rate", args.max_rate, "--transport",
              args.transport]
    results = {}
    for name, scheme in SCHEMES.items():
        results[name] = []
        for seed in range(1, args.seeds + 1):
            tag = f"{name}-seed{seed}"
            results[name].append(s := run_ns3(
                *common, "--seed", seed, *scheme,
                flows_csv=args.out / f"{tag}-flows.csv",
                trace_csv=args.out / f"{tag}-thresholds.csv"))
            print(f"{tag}: {s['completed']}/{s['flows']} flows, "
                  f"{s['sim_s']:.1f} s simulated in {s['wall_s']:.1f} s",
                  file=sys.stderr)
    first = results["fifo"][0]
    ecn = (f"CE above {first['ecn_threshold']} packets"
           if first["ecn_threshold"] else "no ECN marking")
    regime = (f"{first['transport']}, {first['hosts']} senders, "
              f"the receiver's link {args.rate}bit/s, the port shaped to "
              f"{args.max_rate}bit/s, offered load {args.load:g} of it, "
              f"{args.flows} flows a seed, seeds 1-{args.seeds}; the port: "
              f"2 queues, trust=switch, {first['buffer']} packets, {ecn}; "
              f"command: `{' '.join(map(str, [NS3.name, *common]))} "
              "--seed S --scheme ...`")
    # The testbed ran this regime: DCTCP, 100 Mbit/s shaped, 50 %.
    testbed = (testbed_short_fcts()
               if (args.transport, args.max_rate, args.load)
               == ("dctcp", "100M", 0.5) else None)
    text = report(results, regime, testbed)
    (args.out / "report.md").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()

"""The thesis's micro benchmark on ns-3 (build/bin/awafs-ns3, sim/ns3/):
the unchanged core on a simulated switch port, one run per scheme, and a
markdown report of the short and long flows' mean FCT.

    python -m sim.ns3_eval --out build/eval-sim    (make eval-sim)

Also the library that runs awafs-ns3 and reads what it writes
(tests/test_ns3_smoke.py)."""

import argparse
import csv
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NS3 = REPO / "build" / "bin" / "awafs-ns3"

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
    out["thresholds"] = [int(t) for t in str(out["thresholds"]).split(",")]
    return out


def run_ns3(*args, flows_csv=None, trace_csv=None, check=True,
            timeout=600):
    """Runs awafs-ns3 with 'args'; returns its summary (parse_summary())
    with 'rows' (the flows: dicts of id, size, start_s, fct_ms or None,
    sender) and 'trace' (the rounds: time_s, version, window, load, thr as
    a list) when their files are given."""
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
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_flows(path):
    rows = read_csv(path)
    for r in rows:
        r["id"], r["size"] = int(r["id"]), int(r["size"])
        r["sender"] = int(r["sender"])
        r["start_s"] = float(r["start_s"])
        r["fct_ms"] = float(r["fct_ms"]) if r["fct_ms"] else None
    return rows


def read_trace(path):
    rows = read_csv(path)
    for r in rows:
        r["time_s"], r["load"] = float(r["time_s"]), float(r["load"])
        r["version"], r["window"] = int(r["version"]), int(r["window"])
        r["thr"] = [int(v) for k, v in r.items() if k.startswith("thr")]
    return rows


def report(results, regime):
    """A markdown table of the runs in 'results' ({scheme: summary})."""
    lines = [f"Micro benchmark on ns-3: {regime}.", "",
             "| scheme | short mean FCT (ms) | long mean FCT (ms) "
             "| final threshold (bytes) | flows completed |",
             "|---|---|---|---|---|"]
    for name, s in results.items():
        lines.append(f"| {name} | {s['short_mean_ms']:.2f} | "
                     f"{s['long_mean_ms']:.1f} | "
                     f"{','.join(map(str, s['thresholds']))} | "
                     f"{s['completed']}/{s['flows']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True,
                    help="folder for the CSVs and report.md")
    ap.add_argument("--flows", type=int, default=2000)
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rate", default="100M")
    ap.add_argument("--transport", default="dctcp",
                    help="newreno, cubic or dctcp (the thesis's regime, "
                    "with ECN marking at the port)")
    args = ap.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    common = ["--flows", args.flows, "--load", args.load, "--seed",
              args.seed, "--rate", args.rate, "--transport", args.transport]
    results = {}
    for name, scheme in SCHEMES.items():
        results[name] = s = run_ns3(
            *common, *scheme, flows_csv=args.out / f"{name}-flows.csv",
            trace_csv=args.out / f"{name}-thresholds.csv")
        print(f"{name}: {s['completed']}/{s['flows']} flows, "
              f"{s['sim_s']:.1f} s simulated in {s['wall_s']:.1f} s",
              file=sys.stderr)
    first = next(iter(results.values()))
    ecn = (f"CE above {first['ecn_threshold']} packets"
           if first["ecn_threshold"] else "no ECN marking")
    regime = (f"{first['transport']}, {first['hosts']} senders, "
              f"{args.rate}bit/s links, offered load {args.load:g} of the "
              f"bottleneck, {args.flows} flows, seed {args.seed}; the port: "
              f"2 queues, trust=switch, {first['buffer']} packets, {ecn}; "
              f"command: "
              f"`{' '.join(map(str, [NS3.name, *common]))} --scheme ...`")
    text = report(results, regime)
    (args.out / "report.md").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()

"""The thesis's micro benchmark (§5.3) with real servers: flow completion
times through the patched switch under FIFO, static and adaptive MLFQ.

    python3 eval/micro_nginx.py [--flows N] [--load BPS] [--rate BPS]
                                [--seed S] [--out DIR]

Topology (testbed/hosts.py): h1 and h3 run nginx (Debian) in one cgroup
with the host agent attached; h2 runs eval/httpload.py, which fetches
files over HTTP/1.1 keep-alive connections: 20 % 1000 kB files from h1,
80 % 10 kB files from h3 (the thesis: long flows from N1 and N3, short ones
from N2, all to N0).  The bottleneck is the awafs egress port p2 toward h2,
shaped to --rate; the offered load is --load.  Every scheme sees the same
arrivals and sizes (--seed).  Transport: the system's (cubic).

Schemes: one queue (FIFO: two queues, everything below one threshold),
static MLFQ with the matched threshold (10 kB) and a mismatched one
(1000 kB), and adaptive AWAFS from 1000 kB with the thesis's RefPct (10)
and with another percentile (70).

Writes DIR/micro-nginx.csv (one row per flow and scheme) and prints a
markdown table: mean and p99 FCT of short and long flows, and the
threshold sampled every second while each scheme ran."""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from testbed.hosts import Cgroup, HostPair  # noqa: E402
from testbed.servers import Nginx  # noqa: E402

AGENT = str(REPO / "build" / "bin" / "awafs-host")
SHORT, LONG = 10000, 1000000
COMMON = {"queues": 2, "window-ms": 1000, "interval-ms": 200,
          "min-samples": 10}
SCHEMES = [
    ("fifo", {"mode": "static", "thresholds": 4294967295}),
    ("static-1000KB", {"mode": "static", "thresholds": 1000000}),
    ("static-10KB", {"mode": "static", "thresholds": 10240}),
    ("awafs-pct10", {"mode": "adaptive", "thresholds": 1000000,
                     "percentiles": 10}),
    ("awafs-pct70", {"mode": "adaptive", "thresholds": 1000000,
                     "percentiles": 70}),
]


def p99(values):
    s = sorted(values)
    return s[min(len(s) - 1, int(0.99 * len(s)))]


def run_scheme(hp, name, config, args, www):
    """Runs the load under one scheme; returns the flows' CSV rows and the
    thresholds sampled every second while it ran."""
    hp.sb.set_awafs("p2", **COMMON, **config, **{"max-rate": args.rate})
    out = Path(www) / f"{name}.csv"
    short = f"{hp.hosts[2].addr}:8080=short:{SHORT}:0.8"
    long_ = f"{hp.h1.addr}:8080=long:{LONG}:0.2"
    load = hp.h2.popen(sys.executable, str(REPO / "eval" / "httpload.py"),
                       "--server", short, "--server", long_, "--load",
                       str(args.load), "--flows", str(args.flows), "--seed",
                       str(args.seed), "--out", str(out))
    thresholds = []
    while load.poll() is None:
        _, details, _ = hp.sb.qos_show("p2")
        thresholds.append(int(details["current-thresholds"]))
        time.sleep(1)
    assert load.returncode == 0, f"httpload failed under {name}"
    with open(out) as f:
        rows = list(csv.DictReader(f))
    hp.sb.vsctl("clear", "port", "p2", "qos", "--", "--all", "destroy",
                "qos")
    return rows, thresholds


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=2000)
    ap.add_argument("--load", type=float, default=55e6)
    ap.add_argument("--rate", type=int, default=100000000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(REPO / "build" / "eval"))
    args = ap.parse_args(argv)
    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)

    www = tempfile.mkdtemp(prefix="awafs-www-")
    os.chmod(www, 0o755)
    (Path(www) / "short").write_bytes(b"s" * SHORT)
    (Path(www) / "long").write_bytes(b"l" * LONG)
    hp = HostPair(3)
    cg = Cgroup("awafs-eval")
    servers = []
    results = []
    try:
        subprocess.run([AGENT, "attach", "--cgroup", str(cg.path)],
                       check=True, capture_output=True)
        servers = [Nginx(h, www, cgroup=cg) for h in (hp.h1, hp.hosts[2])]
        for name, config in SCHEMES:
            t0 = time.time()
            rows, thresholds = run_scheme(hp, name, config, args, www)
            results.append((name, rows, thresholds))
            print(f"{name}: {len(rows)} flows in {time.time() - t0:.0f} s",
                  file=sys.stderr, flush=True)
    finally:
        for s in servers:
            s.stop()
        subprocess.run([AGENT, "detach", "--cgroup", str(cg.path)],
                       capture_output=True)
        cg.delete()
        hp.close()

    with open(outdir / "micro-nginx.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scheme", "size", "start_s", "fct_us"])
        for name, rows, _ in results:
            for r in rows:
                w.writerow([name, r["size"], r["start_s"], r["fct_us"]])
    print(f"micro benchmark through nginx: {args.flows} flows, 80 % "
          f"{SHORT // 1000} kB / 20 % {LONG // 1000} kB, offered "
          f"{args.load / 1e6:.0f} Mbit/s, port shaped to "
          f"{args.rate / 1e6:.0f} Mbit/s, seed {args.seed}, cubic\n")
    print("| scheme | short mean FCT (ms) | short p99 (ms) | long mean (ms) "
          "| long p99 (ms) | threshold, median (min–max) over the run |")
    print("|---|---|---|---|---|---|")
    for name, rows, thr in results:
        s = [int(r["fct_us"]) / 1000 for r in rows if int(r["size"]) == SHORT]
        lg = [int(r["fct_us"]) / 1000 for r in rows if int(r["size"]) == LONG]
        print(f"| {name} | {statistics.mean(s):.2f} | {p99(s):.2f} | "
              f"{statistics.mean(lg):.1f} | {p99(lg):.1f} | "
              f"{statistics.median(thr):.0f} ({min(thr)}–{max(thr)}) |")


if __name__ == "__main__":
    main(sys.argv[1:])

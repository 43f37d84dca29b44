"""What the host agent costs a sender: iperf3 TCP throughput between two
network namespaces over a plain veth pair (no switch, default offloads:
TSO/GSO on), with no agent, with the agent, with the agent in
per-segment mode (GSO limited to one segment), and with GSO so limited but
no agent.  Median of RUNS runs of
SECONDS each, the configurations alternating.

usage: python3 -m bench.agent_cost [--runs N] [--seconds S] [--csv FILE]
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from testbed.hosts import Cgroup
from testbed.traffic import ip

REPO = Path(__file__).resolve().parent.parent

AGENT = str(REPO / "build" / "bin" / "awafs-host")
# gso-1-no-agent separates the cost of one-segment GSO from the agent's.
CONFIGS = ["no-agent", "agent", "agent-per-segment", "gso-1-no-agent"]


def ns(name, *cmd, **kw):
    return subprocess.run(["ip", "netns", "exec", name, *cmd],
                          capture_output=True, text=True, **kw)


def setup():
    for n in ("awafs-c1", "awafs-c2"):
        subprocess.run(["ip", "netns", "del", n], capture_output=True)
        ip("netns", "add", n)
    ip("link", "add", "eth0", "netns", "awafs-c1", "type", "veth", "peer",
       "name", "eth0", "netns", "awafs-c2")
    for i, n in enumerate(("awafs-c1", "awafs-c2"), 1):
        ns(n, "ip", "addr", "add", f"10.78.0.{i}/24", "dev", "eth0",
           check=True)
        ns(n, "ip", "link", "set", "eth0", "up", check=True)
        ns(n, "ip", "link", "set", "lo", "up", check=True)


def teardown():
    for n in ("awafs-c1", "awafs-c2"):
        subprocess.run(["ip", "netns", "del", n], capture_output=True)


def throughput(cgroup, seconds):
    server = subprocess.Popen(["ip", "netns", "exec", "awafs-c2", "iperf3",
                               "-s", "-1"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    client = subprocess.run(["ip", "netns", "exec", "awafs-c1", "iperf3",
                             "-c", "10.78.0.2", "-t", str(seconds), "-J"],
                            capture_output=True, text=True, check=True,
                            preexec_fn=cgroup.join)
    server.wait(timeout=30)
    data = json.loads(client.stdout)
    return data["end"]["sum_received"]["bits_per_second"] / 1e9


def run(runs=3, seconds=3.0):
    rows = []
    setup()
    cg = Cgroup("awafs-bench")
    try:
        for i in range(runs):
            for name in CONFIGS:
                if name.startswith("agent"):
                    subprocess.run([AGENT, "attach", "--cgroup",
                                    str(cg.path)], check=True,
                                   capture_output=True)
                if name in ("agent-per-segment", "gso-1-no-agent"):
                    ns("awafs-c1", AGENT, "per-segment", "eth0", "on",
                       check=True)
                try:
                    gbps = throughput(cg, seconds)
                finally:
                    ns("awafs-c1", AGENT, "per-segment", "eth0", "off")
                    subprocess.run([AGENT, "detach", "--cgroup",
                                    str(cg.path)], capture_output=True)
                rows.append({"run": i, "config": name, "gbps": gbps})
    finally:
        cg.delete()
        teardown()
    base = {r["run"]: r["gbps"] for r in rows if r["config"] == "no-agent"}
    for r in rows:
        r["ratio"] = r["gbps"] / base[r["run"]]
    return rows


def summary(rows, name):
    g = [r["gbps"] for r in rows if r["config"] == name]
    q = [r["ratio"] for r in rows if r["config"] == name]
    return statistics.median(g), statistics.median(q), min(q), max(q)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--csv")
    args = ap.parse_args()
    if os.geteuid():
        sys.exit("needs root (namespaces, BPF)")
    rows = run(args.runs, args.seconds)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    for name in CONFIGS:
        g, q, qmin, qmax = summary(rows, name)
        print(f"{name:<18} {g:6.2f} Gbit/s  {q:.3f} [{qmin:.3f}, {qmax:.3f}]")


if __name__ == "__main__":
    main()

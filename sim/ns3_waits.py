"""Where the packets of kept ns-3 grid runs waited: each run named is run
again with awafs-ns3 --waits-csv (the options of its folder's grid.json),
its flows must come out byte for byte as the kept ones (or nothing is
kept), and the waits are kept beside them as NAME.waits.csv.gz.  Then, for
each run, by flow size: the mean FCT, and the mean wait of a packet in its
sender's NIC and in the switches' queues on its path (all hops together),
split by queue, of the short flows those that no timer held up; written to
OUT/waits.md and printed.

    python -m sim.ns3_waits --out eval/results/ns3-leafspine-3x4-websearch80 \\
        --runs websearch-load80-auto-seed1,... [--jobs 2] [--warmup-s 0.2]

A wait is from a packet's arrival at a queue disc to its dequeue (not its
transmission); only the senders' packets count, not their receivers'
ACKs."""

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from sim.ns3_eval import NS3, read_csv, read_flows
from sim.ns3_grid import (SHORT_MAX, SIZE_CLASSES, STALL_MS, flows_digest,
                          run_all, run_point)
from testbed import markdown

NAME = re.compile(r"(?P<workload>.+)-load(?P<load>\d+)-(?P<scheme>.+)"
                  r"-seed(?P<seed>\d+)$")
# The grid's short-flow size classes (upper bounds, bytes), and the long.
CLASSES = SIZE_CLASSES + [(float("inf"), "long")]


def point_of(name):
    """(workload, load, scheme, seed) of a run's NAME."""
    m = NAME.match(name)
    if not m:
        raise ValueError(f"not a grid run's name: {name}")
    return (m["workload"], int(m["load"]) / 100, m["scheme"], int(m["seed"]))


def measure(out, common, name):
    """Runs 'name' again with its waits recorded, in a temporary folder as
    ns3_grid.verify() does; False if they were kept already.  Raises if
    its flows differ from the kept ones."""
    waits = out / f"{name}.waits.csv.gz"
    if waits.exists():
        return False
    with tempfile.TemporaryDirectory() as tmp:
        run_point(Path(tmp), common, point_of(name), waits=True)
        if (flows_digest(Path(tmp) / f"{name}.csv.gz")
                != flows_digest(out / f"{name}.csv.gz")):
            raise RuntimeError(f"{name}: run again, its flows differ from "
                               "the kept ones (another commit?)")
        shutil.move(Path(tmp) / waits.name, waits)
    return True


def class_of(size):
    return next(label for bound, label in CLASSES if size <= bound)


def run_tables(out, name, warmup_s):
    """Of one run: rows per size class (its flows, mean FCT and the mean
    waits of a packet; of the short flows those of at most STALL_MS: those
    over it waited for a timer, and are only counted), a row of the mean wait of a
    packet in each switch queue (and the share of the departures it has),
    and the queues."""
    flows = {f["id"]: f for f in read_flows(out / f"{name}.csv.gz")}
    waits = read_csv(out / f"{name}.waits.csv.gz")
    queues = sum(1 for k in waits[0] if k.endswith("_packets")) - 1
    acc = {label: {"flows": 0, "stalled": 0, "fct": 0.0, "packets": 0,
                   "nic": 0.0, "q": [0.0] * queues} for _, label in CLASSES}
    departures = [0] * queues
    for w in waits:
        f = flows[int(w["id"])]
        if f["start_s"] < warmup_s or f["fct_ms"] is None:
            continue
        a = acc[class_of(f["size"])]
        if f["size"] <= SHORT_MAX and f["fct_ms"] > STALL_MS:
            a["stalled"] += 1
            continue
        a["flows"] += 1
        a["fct"] += f["fct_ms"]
        a["packets"] += int(w["nic_packets"])
        a["nic"] += float(w["nic_wait_us"])
        for q in range(queues):
            a["q"][q] += float(w[f"q{q}_wait_us"])
            departures[q] += int(w[f"q{q}_packets"])
    rows = []
    for _, label in CLASSES:
        a = acc[label]
        if not a["flows"] or not a["packets"]:
            continue
        per = [us / a["packets"] for us in a["q"]]
        rows.append([name, label, a["flows"], a["stalled"],
                     f"{a['fct'] / a['flows']:.3f}",
                     f"{a['nic'] / a['packets']:.1f}", f"{sum(per):.1f}",
                     *(f"{x:.1f}" for x in per)])
    waited = [sum(a["q"][q] for a in acc.values()) for q in range(queues)]
    total = sum(departures)
    by_queue = [name, *(f"{us / n:.1f} ({100 * n / total:.0f} %)" if n
                        else "-" for us, n in zip(waited, departures))]
    return rows, by_queue, queues


def report(out, names, warmup_s):
    rows, by_queue, queues = [], [], 0
    for name in names:
        r, q_row, queues = run_tables(out, name, warmup_s)
        rows += r
        by_queue.append(q_row)
    return "\n".join([
        "Where packets waited (`python -m sim.ns3_waits`): per run and flow "
        "size, the mean FCT and the mean wait of a sender's packet in its "
        "NIC and in the switches' queues on its path (every hop together), "
        "split by the queue it waited in (srpt: all in q0); flows that "
        f"started from {warmup_s:g} s, the short ones (at most "
        f"{SHORT_MAX // 1000} kB) that took at most {STALL_MS} ms (those over "
        "it, counted, waited for a timer).", "",
        *markdown.head(["run", "flows of", "flows",
                        f"over {STALL_MS} ms", "mean FCT (ms)",
                        "NIC wait (µs/packet)", "switch wait (µs/packet)",
                        *(f"in q{q}" for q in range(queues))]),
        *map(markdown.row, rows), "",
        "The mean wait of a packet in each switch queue (µs, per hop), and "
        "the share of the packets' departures from the switch queues that "
        "left that queue:", "",
        *markdown.head(["run", *(f"q{q}" for q in range(queues))]),
        *map(markdown.row, by_queue)]) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True,
                    help="a grid's folder (its grid.json and kept runs)")
    ap.add_argument("--runs", required=True,
                    help="names of its runs, comma-separated")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--warmup-s", type=float, default=0.0)
    ap.add_argument("--summary-only", action="store_true")
    args = ap.parse_args(argv)

    names = args.runs.split(",")
    for name in names:
        try:
            point_of(name)
        except ValueError as e:
            ap.error(str(e))
        if not (args.out / f"{name}.csv.gz").exists():
            ap.error(f"{args.out} keeps no run {name}")
    if not NS3.exists():
        sys.exit(f"ns3_waits: {NS3} not built (make ns3)")
    common = json.loads((args.out / "grid.json").read_text())
    if not args.summary_only:
        run_all(names, lambda n: (args.out / f"{n}.waits.csv.gz").exists(),
                lambda n: measure(args.out, common, n), args.jobs)
    text = report(args.out, names, args.warmup_s)
    (args.out / "waits.md").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()

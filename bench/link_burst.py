"""What a port shaped to its link sends while its PMD is kept away (issue
27: the burst sized so that a long PMD iteration does not idle the link).

A net_null port (whose link says 10 Gb/s) takes more 1518-byte frames than
it carries, so its AWAFS queues are always backlogged; a process on the
PMD's CPU runs BUSY microseconds every 2 ms, and the kernel lets it
preempt the PMD for them, as another thread or a hypervisor's would.
Each row: the share of the link's wire rate the port sent in three 2 s
windows, counted at the port, and what `qos/show` said at the end: the
burst (`link-burst-us`, absent in builds that sized none) and the longest
the packets waited for a visit (`held-gap-max-us`).  Binaries and busy
times alternate, round after round, so a slow stretch of the machine falls
on all.

    python3 -m bench.link_burst [--vswitchd BIN ...] [--busy-us 0,200,500]
        [--rounds 2] [--out DIR]

--vswitchd (repeatable) measures other binaries beside this build's, for
example one built from the commit before the burst was sized.  Writes
DIR/link-burst.csv and DIR/link-burst.md (default bench/results)."""

import argparse
import csv
import statistics
import subprocess
import sys
import time
from pathlib import Path

from testbed.net import cpus_of
from testbed.ovs_sandbox import BIN, OvsSandbox
from testbed.switch import null_flood, tx_packets, wait_until
from testbed.traffic import WIRE_OVERHEAD

REPO = Path(__file__).resolve().parent.parent
SIZE, LINK, PERIOD_MS, WINDOWS = 1518, 10 ** 10, 2, 3
HOG = """
import sys, time
busy, period = float(sys.argv[1]) / 1e6, float(sys.argv[2]) / 1e3
while True:
    end = time.perf_counter() + busy
    while time.perf_counter() < end:
        pass
    time.sleep(period)
"""


def measure(vswitchd, busy_us):
    """(shares of the link's wire rate, link-burst-us, held-gap-max-us)."""
    with OvsSandbox(vswitchd=vswitchd) as sb:
        null_flood(sb, f"net_null0,size={SIZE},copy=1")
        sb.set_awafs("p1", queues=2, mode="static", thresholds=10000)
        assert wait_until(lambda: int(sb.qos_show("p1")[2][1]
                                      ["dropped-packets"]) > 1000, 10)
        hog = None
        if busy_us:
            hog = subprocess.Popen(
                ["taskset", "-c", str(min(cpus_of(sb.pmd_cpu_mask))),
                 sys.executable, "-c", HOG, str(busy_us), str(PERIOD_MS)])
        try:
            time.sleep(1)
            shares = []
            for _ in range(WINDOWS):
                n0, t0 = tx_packets(sb, 2), time.monotonic()
                time.sleep(2)
                n1, t1 = tx_packets(sb, 2), time.monotonic()
                shares.append((n1 - n0) / (LINK / 8 / (SIZE + WIRE_OVERHEAD)
                                           * (t1 - t0)))
            details = sb.qos_show("p1")[1]
        finally:
            if hog:
                hog.kill()
                hog.wait()
    return (shares, details.get("link-burst-us", ""),
            details.get("held-gap-max-us", ""))


def label(binary):
    """'binary' as the report names it: relative to the repository if in
    it."""
    path = Path(binary).resolve()
    return str(path.relative_to(REPO)) if REPO in path.parents else binary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vswitchd", action="append", default=[])
    ap.add_argument("--busy-us", default="0,200,500")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = ap.parse_args()
    binaries = [str(BIN / "ovs-vswitchd")] + args.vswitchd
    busy = [int(b) for b in args.busy_us.split(",")]

    rows = []
    for r in range(args.rounds):
        for b in binaries if r % 2 == 0 else binaries[::-1]:
            for us in busy:
                shares, burst, gap = measure(b, us)
                rows.append({"round": r + 1, "vswitchd": b, "busy_us": us,
                             "shares": " ".join(f"{s:.4f}" for s in shares),
                             "link_burst_us": burst, "held_gap_max_us": gap})
                print(rows[-1], flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "link-burst.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [
        "# A port shaped to its link while its PMD is kept away",
        "",
        f"`python3 -m bench.link_burst --busy-us {args.busy_us} --rounds "
        f"{args.rounds}" + "".join(f" --vswitchd {b}" for b in args.vswitchd)
        + "`, " + time.strftime("%Y-%m-%d") + ".",
        "",
        f"A process on the PMD's CPU busy for the given time every "
        f"{PERIOD_MS} ms; {SIZE}-byte frames, more than the 10 Gb/s link "
        "carries; the share of its wire rate sent, in three 2 s windows "
        "(median [min, max] over the rounds), and what `qos/show` said at "
        "the end of each run.",
        "",
        "| vswitchd | busy (us) | share of the link, median [min, max] "
        "| link-burst-us | held-gap-max-us |",
        "|---|---|---|---|---|",
    ]
    for b in binaries:
        for us in busy:
            mine = [x for x in rows if x["vswitchd"] == b
                    and x["busy_us"] == us]
            shares = [float(s) for x in mine for s in x["shares"].split()]
            lines.append(
                f"| `{label(b)}` | {us} | {statistics.median(shares):.4f} "
                f"[{min(shares):.4f}, {max(shares):.4f}] | "
                f"{', '.join(x['link_burst_us'] or '-' for x in mine)} | "
                f"{', '.join(x['held_gap_max_us'] or '-' for x in mine)} |")
    (args.out / "link-burst.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

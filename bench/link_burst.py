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
import time
from contextlib import nullcontext
from pathlib import Path

from testbed.ovs_sandbox import BIN, OvsSandbox
from testbed.switch import (null_flood, pmd_cpu_taken, wait_until,
                            wire_rate_share)

REPO = Path(__file__).resolve().parent.parent
SIZE, LINK, PERIOD_MS, WINDOWS = 1518, 10 ** 10, 2, 3


def measure(vswitchd, busy_us):
    """(shares of the link's wire rate, link-burst-us, held-gap-max-us)."""
    with OvsSandbox(vswitchd=vswitchd) as sb:
        null_flood(sb, f"net_null0,size={SIZE},copy=1")
        sb.set_awafs("p1", queues=2, mode="static", thresholds=10000)
        assert wait_until(lambda: int(sb.qos_show("p1")[2][1]
                                      ["dropped-packets"]) > 1000, 10)
        with (pmd_cpu_taken(sb, busy_us, PERIOD_MS) if busy_us
              else nullcontext()):
            time.sleep(1)
            shares = [wire_rate_share(sb, 2, LINK, SIZE)
                      for _ in range(WINDOWS)]
            details = sb.qos_show("p1")[1]
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

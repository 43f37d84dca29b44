"""What the evaluation's testbed carries: TCP throughput through the
sandboxed OVS-DPDK switch between Mininet hosts (testbed/net.py) with
nothing shaped -- one sender, then three senders to one receiver, as in the
micro benchmark -- and through an awafs port shaped to the evaluation's
100 Mbit/s (a wire rate: 24 bytes a frame beyond its length, so
full-sized TCP segments carry 94.1 % of it as data); and the base
round-trip times on the star and across the
leaf-spine fabric.  The evaluation's bottleneck must sit well below the
unshaped capacity, so that what it measures is the scheduler, not the
testbed.

usage: python3 -m bench.testbed_capacity [--seconds S]
                                        [--receive-off-pmd | --hosts-anywhere]

The hosts are placed as the evaluation's beds place them
(testbed/senderbed.py): their programs off the PMD's core, their receive
processing on it.  --receive-off-pmd moves that too onto the hosts' core
(RPS, as testbed/hosts.py's beds do); --hosts-anywhere lets the kernel
place the hosts' programs and receive processing on any CPU, the PMD's
too, as the testbed did before 2026-11-28 (testbed/net.py AwafsNet).
Both are for comparison.

Prints a markdown table (docs/evaluation.md quotes it)."""

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from testbed.net import AwafsNet, LeafSpineTopo, StarTopo

REPO = Path(__file__).resolve().parent.parent

RATE = 100000000


def iperf(senders, receiver, seconds):
    """Mbit/s received by 'receiver' from every sender at once (iperf3,
    one cubic stream each; the first second, slow start, not counted)."""
    servers, clients = [], []
    for i, _ in enumerate(senders):
        servers.append(receiver.popen("iperf3", "-s", "-1", "-p",
                                      str(5201 + i),
                                      stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
    time.sleep(0.5)
    for i, s in enumerate(senders):
        clients.append(s.popen("iperf3", "-c", receiver.addr, "-p",
                               str(5201 + i), "-t", str(seconds), "-O", "1",
                               "-C", "cubic", "-J",
                               stdout=subprocess.PIPE, text=True))
    total = 0.0
    for c in clients:
        out, _ = c.communicate(timeout=seconds + 30)
        total += json.loads(out)["end"]["sum_received"]["bits_per_second"]
    for s in servers:
        s.wait(10)
    return total / 1e6


def rtt_us(src, dst):
    """min/avg of 20 pings, in µs."""
    out = src.run("ping", "-c", "20", "-i", "0.05", dst.addr).stdout
    m = re.search(r"= ([\d.]+)/([\d.]+)/", out)
    return float(m.group(1)) * 1000, float(m.group(2)) * 1000


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5)
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--receive-off-pmd", action="store_true")
    where.add_argument("--hosts-anywhere", action="store_true")
    args = ap.parse_args(argv)
    place = {"off_pmd_cpus": not args.hosts_anywhere,
             "receive_off_pmd": args.receive_off_pmd}
    rows = []
    star = AwafsNet(StarTopo(names=["n0", "n1", "n2", "n3"]), **place)
    try:
        n0, n1, n2, n3 = (star[n] for n in ("n0", "n1", "n2", "n3"))
        rows.append(("star, n1 -> n0, unshaped",
                     f"{iperf([n1], n0, args.seconds):.0f} Mbit/s"))
        rows.append(("star, n1 n2 n3 -> n0, unshaped",
                     f"{iperf([n1, n2, n3], n0, args.seconds):.0f} "
                     "Mbit/s"))
        star.sb.set_awafs("p0", queues=2, thresholds=10000,
                          **{"max-rate": RATE})
        rows.append(("star, n1 n2 n3 -> n0, awafs port at 100 Mbit/s",
                     f"{iperf([n1, n2, n3], n0, args.seconds):.1f} "
                     "Mbit/s"))
        star.sb.vsctl("clear", "port", "p0", "qos")
        lo, avg = rtt_us(n1, n0)
        rows.append(("star, RTT n1 -> n0 (ping min/avg)",
                     f"{lo:.0f} / {avg:.0f} µs"))
    finally:
        star.close()
    fabric = AwafsNet(LeafSpineTopo(leaves=2, spines=2, per_leaf=2),
                      static_arp=True, **place)
    try:
        h1, h2, h3 = (fabric[n] for n in ("h1", "h2", "h3"))
        lo, avg = rtt_us(h1, h2)
        rows.append(("leaf-spine, RTT within a leaf (ping min/avg)",
                     f"{lo:.0f} / {avg:.0f} µs"))
        lo, avg = rtt_us(h1, h3)
        rows.append(("leaf-spine, RTT across a spine (ping min/avg)",
                     f"{lo:.0f} / {avg:.0f} µs"))
    finally:
        fabric.close()
    print("| what | measured |\n|---|---|")
    for what, value in rows:
        print(f"| {what} | {value} |")


if __name__ == "__main__":
    main(sys.argv[1:])

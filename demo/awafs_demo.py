"""`make demo`: shorter short-flow completion times on real TCP.

The thesis's micro benchmark (testbed/micro.py) in about two minutes: a
sandboxed patched OVS-DPDK switch, four Mininet hosts, nginx on three of
them with the AWAFS host agent (long flows from n1 and n3, short ones from
n2), and a client on n0 that fetches 10 kB files (80 %) and 1000 kB files
(20 %) over HTTP/1.1 at 55 Mbit/s toward the awafs port shaped to
100 Mbit/s (a wire rate).  The same traffic runs three times: one queue
(FIFO), two queues with a static threshold of 1000 kB (the wrong one for
this workload), and AWAFS starting from that same 1000 kB and learning its
threshold from the completed responses.  The regime is the thesis's, as
`make eval` runs it: DCTCP on every host (the agent's awafs_dctcp) with ECN
marking at the port.  The demo prints the regime (transport as the sockets
ran it, ECN, buffer, the load the port carried), the flow completion times
of each scheme, how the threshold converged, and writes a plot.

    python3 -m demo.awafs_demo [--transport cubic|bbr|dctcp]

--transport cubic (or bbr) runs the same without ECN: with one shared
1024-packet buffer, FIFO's short flows then wait behind a standing queue
(bufferbloat), a baseline the scheduler's gain must not be read against.
"""
import argparse
import os
import sys
from pathlib import Path

from testbed.micro import LONG, SHORT, MicroBench

REPO = Path(__file__).resolve().parent.parent

SCHEMES = [("fifo", "one queue (FIFO)"),
           ("static-1000KB", "static threshold 1000 kB"),
           ("awafs-pct10", "AWAFS, 10th percentile, from 1000 kB")]
FLOWS = 1000
LOAD = 55e6
PLOT = REPO / "build" / "demo" / "awafs-demo.png"


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (cdf, thr) = plt.subplots(1, 2, figsize=(11, 4.2))
    for r, (_, label) in zip(results, SCHEMES):
        fcts = sorted(r.fcts_ms(SHORT))
        cdf.plot(fcts, [(i + 1) / len(fcts) for i in range(len(fcts))],
                 label=label)
    cdf.set_xscale("log")
    cdf.set_xlabel("completion time of 10 kB flows (ms)")
    cdf.set_ylabel("fraction of flows")
    cdf.set_title("Short flows (real TCP through the switch)")
    cdf.legend(loc="lower right", fontsize=8)
    cdf.grid(True, which="both", alpha=0.3)

    awafs = results[-1]
    thr.step([t for t, _ in awafs.thresholds],
             [v / 1000 for _, v in awafs.thresholds], where="post",
             label="AWAFS threshold")
    thr.axhline(SHORT / 1000, color="gray", linestyle="--",
                label="10 kB (the right threshold)")
    thr.set_yscale("log")
    thr.set_xlabel("time (s)")
    thr.set_ylabel("demotion threshold (kB)")
    thr.set_title("The threshold AWAFS learned")
    thr.legend(fontsize=8)
    thr.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def converged_at(thresholds):
    """When the threshold first came within ±20 % of 10 kB."""
    for t, v in thresholds:
        if 0.8 * SHORT <= v <= 1.2 * SHORT:
            return t
    return None


def regime(results):
    """Lines that say what ran: transport, ECN, buffer, rates, load."""
    t = results[0].transport
    details = results[0].port["details"]
    cc = sorted({cc for host in t["sockets_seen"].values() for cc in host})
    ecn = (f"on, CE above {details['ecn-threshold']} packets queued at the "
           "port" if details["ecn-threshold"] != "0" else "off")
    return [f"  transport      {t['transport']} (the sockets ran: "
            f"{', '.join(cc)}; read back with ss -ti during each run)",
            f"  ECN            {ecn}",
            f"  buffer         {details['buffer']} packets, all queues "
            "together",
            f"  port           max-rate {int(details['max-rate']) / 1e6:.0f} "
            "Mbit/s of wire (frames + 24 B each)",
            f"  offered load   {LOAD / 1e6:.0f} Mbit/s of HTTP responses"]


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", default="dctcp",
                    help="dctcp (ECN at the port, default), cubic or bbr")
    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("make demo needs root (DPDK hugepages, namespaces, BPF)")
    print(__doc__.split("\n\n", 1)[1].split("\n\n    python3")[0])
    print("\nStarting the switch, the hosts and nginx...", flush=True)
    bench = MicroBench(args.transport)
    results = []
    try:
        for name, label in SCHEMES:
            print(f"  {label}: {FLOWS} flows...", flush=True)
            results.append(bench.measure(name, FLOWS, LOAD))
    finally:
        bench.close()

    print("\nRegime:")
    print("\n".join(regime(results)))
    print(f"\nFlow completion times ({FLOWS} flows, 80 % {SHORT // 1000} kB "
          f"/ 20 % {LONG // 1000} kB), and what the port carried:\n")
    print(f"  {'scheme':38} {'short mean':>11} {'short p99':>10} "
          f"{'long mean':>10} {'carried':>13} {'drops':>6} {'CE marks':>9}")
    for r, (_, label) in zip(results, SCHEMES):
        s = r.summary()
        print(f"  {label:38} {s['short_mean']:8.2f} ms {s['short_p99']:7.1f}"
              f" ms {s['long_mean']:7.0f} ms {r.carried_bps() / 1e6:6.1f} "
              f"Mbit/s {r.port['dropped']:6} {r.port['ecn_marks']:9}")
    print("  (carried: wire bit/s the port sent, from the start of the run "
          "to its last flow's end)")
    awafs = results[-1]
    at = converged_at(awafs.thresholds)
    final = awafs.summary()["thr_median"]
    if at is None:
        print("\nAWAFS started at 1000000 bytes and did not converge.")
    else:
        print(f"\nAWAFS started at 1000000 bytes and reached {final:.0f} "
              f"bytes (10 kB + the HTTP header) after {at:.1f} s; short "
              "flows then stayed in the high-priority queue.")
    plot(results, PLOT)
    print(f"Plot: {PLOT}")


if __name__ == "__main__":
    main(sys.argv[1:])

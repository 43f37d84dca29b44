"""`make demo`: AWAFS in a real, sandboxed OVS-DPDK switch.

Two DPDK ports (net_af_packet on veth pairs), the awafs QoS with 4 queues on
the egress port, and flows whose sizes follow the data-mining workload for
the first half of the run and web search for the second.  Each flow sends
three frames carrying the AWAFS TCP option: its first segment (bytes-sent 0),
one from its middle, and its last, which reports the completed size.  Every
half second the demo prints the thresholds the switch has learned and how
many frames each queue forwarded.
"""

import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from testbed.switch import Switch  # noqa: E402
from testbed.traffic import tcp_frame  # noqa: E402
from testbed.workload import (inverse_cdf, load_cdf,  # noqa: E402
                              weyl_samples, workloads_dir)

PERCENTILES = [25, 50, 75]
FLOWS_PER_S = 1000
PHASE_S = 3.0
TICK_S = 0.5
GOLDEN = 0.6180339887498949


def flow_frames(sizes, first):
    """Three frames per flow: first segment, one from the middle, last."""
    frames = []
    for i, size in enumerate(sizes, first):
        middle = int(((i * GOLDEN) % 1.0) * size)
        frames.append(tcp_frame(bytes_sent=0, sport=10000 + i % 50000,
                                payload=100))
        frames.append(tcp_frame(bytes_sent=middle, sport=10000 + i % 50000,
                                payload=100))
        frames.append(tcp_frame(bytes_sent=max(size - 100, 0),
                                flow_size=size, sport=10000 + i % 50000,
                                payload=100))
    return frames


def queue_tx(sb):
    _, details, queues = sb.qos_show("p1")
    return details, [int(queues[q]["tx_packets"]) for q in sorted(queues)]


def main():
    if os.geteuid() != 0:
        sys.exit("make demo needs root (DPDK hugepages, veth pairs)")
    phases = [("data mining", load_cdf(workloads_dir() / "datamining.cdf")),
              ("web search", load_cdf(workloads_dir() / "websearch.cdf"))]

    print("Starting a sandboxed OVS-DPDK switch (patched ovs-vswitchd)...")
    sw = Switch()
    try:
        sb = sw.sb
        sb.set_awafs("p1", queues=4,
                     percentiles=",".join(map(str, PERCENTILES)),
                     thresholds="7000,14000,21000",
                     **{"window-ms": 250, "interval-ms": 200})
        print("QoS on p1: type=awafs queues=4 percentiles=25,50,75 "
              "thresholds(init)=7000,14000,21000 window=250ms interval=200ms")
        print(f"Traffic: {FLOWS_PER_S} flows/s, {PHASE_S:.0f} s of each "
              "workload, 3 frames per flow (building frames...)\n")
        print(f"{'t(s)':>5}  {'workload':<12} {'ver':>4}  "
              f"{'thresholds (bytes)':<28} frames per queue in the last "
              f"{TICK_S} s (q0..q3)")

        # Frames are built before the run, so that they leave on time.
        ticks, flow, n = [], 0, int(FLOWS_PER_S * TICK_S)
        for name, cdf in phases:
            for _ in range(int(PHASE_S / TICK_S)):
                sizes = weyl_samples(cdf, n, start=flow)
                ticks.append((name, flow_frames(sizes, flow)))
                flow += n

        _, last = queue_tx(sb)
        t0 = time.time()
        for i, (name, frames) in enumerate(ticks):
            start = t0 + i * TICK_S
            if start > time.time():
                time.sleep(start - time.time())
            sw.play(frames, rate=3 * FLOWS_PER_S)
            details, tx = queue_tx(sb)
            delta = [a - b for a, b in zip(tx, last)]
            last = tx
            print(f"{time.time() - t0:5.1f}  {name:<12} "
                  f"{details['thresholds-version']:>4}  "
                  f"{details['current-thresholds']:<28} "
                  + " ".join(f"{d:6d}" for d in delta))

        print("\nExpected from the CDF files (same percentiles, computed "
              "independently):")
        for name, cdf in phases:
            want = [round(inverse_cdf(cdf, p / 100)) for p in PERCENTILES]
            print(f"  {name:<12} {','.join(map(str, want))}")
        print("\nLast threshold updates (ovs-appctl awafs/history p1 5):")
        print(sb.appctl("awafs/history", "p1", "5"))
        print("Recalculation period: mean "
              f"{details['recalc-mean-late-us']} us, max "
              f"{details['recalc-max-late-us']} us late over "
              f"{details['recalc-runs']} rounds of 200 ms")
    finally:
        sw.close()
        print("Switch stopped, sandbox removed.")


if __name__ == "__main__":
    main()

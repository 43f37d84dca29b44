"""Forwarding cost of the awafs QoS type, as a ratio to no QoS measured in
the same ovs-vswitchd, and the recalculation period under that load.

One PMD forwards p0 -> p1 (net_null, no-rx on p1) as fast as it can.  p0 is
either net_null (64-byte frames of zeros: no AWAFS header) or net_pcap
looping 64-byte TCP frames that carry the AWAFS option, one in ten a
completion.  Configurations alternate within each run, so drift hits all of
them alike; each measurement clears the PMD statistics, waits, and reads
'avg processing cycles per packet' and the packet rate.

usage: python3 bench/forwarding.py [--source null|pcap] [--runs N]
                                   [--seconds S] [--csv FILE]
"""

import argparse
import csv
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testbed.ovs_sandbox import OvsSandbox  # noqa: E402

CONFIGS = {
    "no-qos": None,
    "egress-policer": {"type": "egress-policer",
                       "cir": 10 ** 12, "cbs": 10 ** 9},
    "awafs-static-4q": {"queues": 4, "mode": "static"},
    "awafs-adaptive-2q": {"queues": 2},
    "awafs-adaptive-4q": {"queues": 4},
    "awafs-adaptive-8q": {"queues": 8},
}


def write_pcap(path):
    """100 distinct 64-byte TCP frames with the AWAFS option."""
    from scapy.utils import wrpcap

    from testbed.traffic import tcp_frame
    frames = []
    for i in range(100):
        done = i % 10 == 9
        frames.append(tcp_frame(bytes_sent=i * 1000,
                                flow_size=i * 1000 + 2 if done else None,
                                sport=1000 + i, payload=2 if not done else 0))
    wrpcap(str(path), frames)


def apply(sb, name):
    sb.vsctl("clear", "port", "p1", "qos", "--", "--all", "destroy", "qos")
    cfg = CONFIGS[name]
    if cfg is None:
        return
    cfg = dict(cfg)
    qtype = cfg.pop("type", "awafs")
    kv = [f'other_config:{k}="{v}"' for k, v in cfg.items()]
    sb.vsctl("set", "port", "p1", "qos=@q", "--", "--id=@q", "create", "qos",
             f"type={qtype}", *kv)


def measure(sb, seconds):
    sb.appctl("dpif-netdev/pmd-stats-clear")
    time.sleep(seconds)
    out = sb.appctl("dpif-netdev/pmd-stats-show", "-pmd", "1")
    cycles = float(re.search(r"avg processing cycles per packet: ([\d.]+)",
                             out).group(1))
    packets = int(re.search(r"packets received: (\d+)", out).group(1))
    return cycles, packets / seconds / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", choices=["null", "pcap"], default="null")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--csv")
    args = ap.parse_args()
    names = args.configs.split(",")

    tmp = Path(tempfile.mkdtemp(prefix="awafs-bench-"))
    if args.source == "pcap":
        write_pcap(tmp / "in.pcap")
        src = f"net_pcap0,rx_pcap={tmp / 'in.pcap'},infinite_rx=1"
    else:
        src = "net_null0"

    rows = []
    with OvsSandbox() as sb:
        sb.add_bridge()
        sb.add_dpdk_port("br0", "p0", src, 1)
        sb.add_dpdk_port("br0", "p1", "net_null1,no-rx=1", 2)
        sb.ofctl("del-flows", "br0")
        sb.ofctl("add-flow", "br0", "in_port=1,actions=output:2")
        time.sleep(1)
        for run in range(args.runs):
            for name in names:
                apply(sb, name)
                time.sleep(0.5)
                cycles, mpps = measure(sb, args.seconds)
                rows.append({"run": run, "config": name, "cycles": cycles,
                             "mpps": mpps})
        # The recalculation thread's timing with the PMD at full load.
        apply(sb, "awafs-adaptive-4q")
        time.sleep(10)
        _, details, _ = sb.qos_show("p1")

    base = {r["run"]: r["cycles"] for r in rows if r["config"] == "no-qos"}
    for r in rows:
        r["ratio"] = r["cycles"] / base[r["run"]] if r["run"] in base else ""
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)

    print(f"source={args.source} 64B, 1 PMD, {args.runs} runs x "
          f"{args.seconds}s; median [min, max]")
    print(f"{'config':<20} {'cycles/pkt':>22} {'Mpps':>8} {'ratio':>20}")
    for name in names:
        rs = [r for r in rows if r["config"] == name]
        cyc = [r["cycles"] for r in rs]
        rat = [r["ratio"] for r in rs if r["ratio"] != ""]
        mpps = statistics.median(r["mpps"] for r in rs)
        print(f"{name:<20} {statistics.median(cyc):7.1f} "
              f"[{min(cyc):6.1f},{max(cyc):6.1f}] {mpps:8.2f} "
              f"{statistics.median(rat):5.3f} [{min(rat):.3f},"
              f"{max(rat):.3f}]")
    print(f"recalculation under load (awafs-adaptive-4q, 10 s): "
          f"{details['recalc-runs']} rounds of 200 ms, mean "
          f"{details['recalc-mean-late-us']} us late, max "
          f"{details['recalc-max-late-us']} us, "
          f"{details['recalc-late-runs']} rounds > 10 % late, longest "
          f"round {details['recalc-max-us']} us, window "
          f"{details['window-samples']} samples")


if __name__ == "__main__":
    main()

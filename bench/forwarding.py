"""Forwarding cost of the awafs QoS type, as a ratio to no QoS measured in
the same ovs-vswitchd, and the recalculation period under that load.

One PMD forwards p0 -> p1 (net_null, no-rx on p1) as fast as it can.  p0 is
either net_null (frames of zeros: no AWAFS header) or net_pcap looping TCP
frames that carry the AWAFS option, one in ten a completion; frames are 64
or 1518 bytes.  Configurations alternate within each run, so drift hits all of
them alike; each measurement clears the PMD statistics, waits, and reads
'avg processing cycles per packet' and the packet rate.

usage: python3 bench/forwarding.py [--source null|pcap] [--size 64|1518]
           [--runs N] [--seconds S] [--configs A,B] [--vswitchd PATH]
           [--csv FILE]
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
    # The switch's own flow table on every packet (trust=switch).
    "awafs-adaptive-4q-switch": {"queues": 4, "trust": "switch"},
}


def write_pcap(path, size):
    """100 distinct 'size'-byte TCP frames with the AWAFS option (62 bytes
    of headers, 66 for a completion)."""
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    from testbed.traffic import tcp_frame
    frames = []
    for i in range(100):
        done = i % 10 == 9
        payload = max(size - (66 if done else 62), 0)
        frames.append(Ether(tcp_frame(
            bytes_sent=i * 1000, flow_size=i * 1000 + payload if done else None,
            sport=1000 + i, payload=payload)))
    wrpcap(str(path), frames)


def apply(sb, name):
    sb.vsctl("clear", "port", "p1", "qos", "--", "--all", "destroy", "qos")
    cfg = CONFIGS[name]
    if cfg is None:
        return
    cfg = dict(cfg)
    qtype = cfg.pop("type", "awafs")
    if qtype == "awafs":
        # Without max-rate awafs shapes to the link, which net_null says is
        # 10 Gb/s: 1518-byte frames would be shaped and dropped.  Shaped to
        # its maximum instead, it forwards all that the PMD can, as without
        # QoS, so the ratio is the scheduler's CPU cost.
        cfg.setdefault("max-rate", 400000000000)
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


def run(source="null", size=64, runs=5, seconds=2.0, names=None,
        vswitchd=None):
    """Measures 'names' (keys of CONFIGS) alternately in one switch.
    Returns (rows, recalc): one row per run and config with cycles, Mpps and
    the ratio to no-qos of the same run; recalc is the awafs-adaptive-4q
    qos/show details after 10 s at full load (None if not measured)."""
    names = names or list(CONFIGS)
    tmp = Path(tempfile.mkdtemp(prefix="awafs-bench-"))
    if source == "pcap":
        write_pcap(tmp / "in.pcap", size)
        src = f"net_pcap0,rx_pcap={tmp / 'in.pcap'},infinite_rx=1"
    else:
        src = f"net_null0,size={size}"

    rows, recalc = [], None
    with OvsSandbox(vswitchd=vswitchd) as sb:
        sb.add_bridge()
        sb.add_dpdk_port("br0", "p0", src, 1)
        sb.add_dpdk_port("br0", "p1", "net_null1,no-rx=1", 2)
        sb.ofctl("del-flows", "br0")
        sb.ofctl("add-flow", "br0", "in_port=1,actions=output:2")
        time.sleep(1)
        for i in range(runs):
            for name in names:
                apply(sb, name)
                time.sleep(0.5)
                cycles, mpps = measure(sb, seconds)
                rows.append({"binary": "stock" if vswitchd else "awafs",
                             "source": source, "size": size, "run": i,
                             "config": name, "cycles": cycles,
                             "mpps": mpps})
        # The recalculation thread's timing with the PMD at full load.
        if "awafs-adaptive-4q" in names:
            apply(sb, "awafs-adaptive-4q")
            time.sleep(10)
            recalc = sb.qos_show("p1")[1]

    base = {r["run"]: r["cycles"] for r in rows if r["config"] == "no-qos"}
    for r in rows:
        r["ratio"] = r["cycles"] / base[r["run"]] if r["run"] in base else ""
    return rows, recalc


def summary(rows, name):
    """(median cycles, min, max, median Mpps, median ratio, min, max)."""
    rs = [r for r in rows if r["config"] == name]
    cyc = [r["cycles"] for r in rs]
    rat = [r["ratio"] for r in rs if r["ratio"] != ""] or [float("nan")]
    return (statistics.median(cyc), min(cyc), max(cyc),
            statistics.median(r["mpps"] for r in rs),
            statistics.median(rat), min(rat), max(rat))


def recalc_line(d):
    return (f"{d['recalc-runs']} rounds of 200 ms, mean "
            f"{d['recalc-mean-late-us']} us late, max "
            f"{d['recalc-max-late-us']} us, {d['recalc-late-runs']} rounds "
            f"> 10 % late, longest round {d['recalc-max-us']} us, window "
            f"{d['window-samples']} samples")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", choices=["null", "pcap"], default="null")
    ap.add_argument("--size", type=int, choices=[64, 1518], default=64)
    ap.add_argument("--vswitchd", help="another ovs-vswitchd binary")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--csv")
    args = ap.parse_args()
    names = args.configs.split(",")

    rows, recalc = run(args.source, args.size, args.runs, args.seconds,
                       names, args.vswitchd)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    print(f"source={args.source} {args.size}B, 1 PMD, {args.runs} runs x "
          f"{args.seconds}s; median [min, max]")
    print(f"{'config':<20} {'cycles/pkt':>22} {'Mpps':>8} {'ratio':>20}")
    for name in names:
        c, cmin, cmax, mpps, r, rmin, rmax = summary(rows, name)
        print(f"{name:<20} {c:7.1f} [{cmin:6.1f},{cmax:6.1f}] {mpps:8.2f} "
              f"{r:5.3f} [{rmin:.3f},{rmax:.3f}]")
    if recalc:
        print("recalculation under load (awafs-adaptive-4q, 10 s): "
              + recalc_line(recalc))


if __name__ == "__main__":
    main()

"""Soak: one switch under mixed traffic for a long time while its AWAFS
configuration keeps changing and ports come and go (`make soak`: 30 minutes;
tests/test_soak.py: 2).

One PMD forwards two sources to one AWAFS port p1 (net_null, shaped to
2 Gb/s, so it is backlogged and drops): p0, net_pcap looping TCP frames
with the AWAFS option, one in ten a completion of 1 to 100 kB, and p2,
net_null frames without a header.  Every 10 s p1's configuration changes
(queues, mode, percentiles, window type, trust, rate: in place or a new
instance), and every 30 s a port p3 with its own AWAFS QoS is added, fed
and, 20 s later, deleted with packets queued.  The controller app
(build/bin/awafs-controller) manages the bridge throughout and is killed and
restarted every 60 s (first at 30 s), alternately with SIGKILL and SIGTERM:
each time it must see the switch again within 20 s and report p1's current
configuration.  Every 2 s it samples the ovs-vswitchd's RSS, the mbufs in
use, p1's threshold version and the packets forwarded.

At the end it checks: the switch is alive and was forwarding throughout;
with the flows and QoS removed, the mbufs in use are back to where they
were before (within one rx burst); the RSS of the second half is no higher
than the first half's (plus 4 MiB); the thresholds were still being
recomputed in the last adaptive phase.  Writes soak.csv and soak.svg (RSS
and mbufs in use over time) to OUTDIR.

usage: python3 -m tests.soak [--minutes M] [--out OUTDIR]
"""

import argparse
import csv
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

from bench.forwarding import write_pcap
from testbed.controller import Controller, free_port
from testbed.ovs_sandbox import (OvsSandbox,
                                 one_switch_per_machine)

RATE = 2000000000               # p1's max-rate: backlogged.
DPID = "0000000000000001"
CONFIGS = [
    {"queues": 4},
    {"queues": 2, "mode": "static", "thresholds": 20000},
    {"queues": 8, "window-type": "exact",
     "percentiles": "5,10,20,30,40,50,60"},
    {"queues": 4, "percentiles": "20,40,60", "ecn-threshold": 50},
    {"queues": 4, "percentiles": "20,40,60", "max-wait-us": 2000},
    {"queues": 4, "trust": "switch"},
    {"queues": 4, "trust": "verify", "max-rate": RATE // 2},
    {"queues": 4},
]


def rss_kib(pid):
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))


def forwarded(sb):
    out = sb.appctl("dpif-netdev/pmd-stats-show")
    return sum(int(n) for n in re.findall(r"packets received: (\d+)", out))


def mbufs_in_use(sb):
    """The shared mempool's mbufs in use, the least of 20 reads over 2 s:
    the sources' rx bursts (up to 32 mbufs each) come and go between
    reads."""
    reads = []
    for _ in range(20):
        reads.append(sb.mempool_in_use("p0"))
        time.sleep(0.1)
    return min(reads)


def svg(rows, path):
    """RSS (MiB) and mbufs in use over time, as two polylines."""
    w, h, pad = 800, 300, 40
    t_max = max(r["t"] for r in rows) or 1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" '
           f'height="{h}" font-family="sans-serif" font-size="12">']
    for key, label, color, y0 in (("rss_mib", "ovs-vswitchd RSS (MiB)",
                                   "#c33", 0),
                                  ("mbufs", "mbufs in use", "#36c", 1)):
        v_max = max(r[key] for r in rows) * 1.1 or 1
        pts = " ".join(
            f"{pad + (w - 2 * pad) * r['t'] / t_max:.1f},"
            f"{h - pad - (h - 2 * pad) * r[key] / v_max:.1f}" for r in rows)
        out.append(f'<polyline fill="none" stroke="{color}" points="{pts}"/>')
        out.append(f'<text x="{pad}" y="{15 + 15 * y0}" fill="{color}">'
                   f'{label}, top of scale {v_max:.0f}</text>')
    out.append(f'<text x="{w - pad - 80}" y="{h - 10}">time: {t_max:.0f} s'
               '</text></svg>')
    path.write_text("\n".join(out) + "\n")


def soak(minutes, out):
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="awafs-soak-"))
    write_pcap(tmp / "in.pcap", 64)
    rows, versions, problems = [], [], []
    with OvsSandbox() as sb:
        sb.add_bridge()
        sb.add_dpdk_port("br0", "p0", f"net_pcap0,rx_pcap={tmp / 'in.pcap'},"
                         "infinite_rx=1", 1)
        sb.add_dpdk_port("br0", "p1", "net_null1,no-rx=1", 2)
        sb.add_dpdk_port("br0", "p2", "net_null2,size=64", 3)
        # Secure: the flows stay while the controller is away.
        ofp_port = free_port()
        sb.vsctl("set", "bridge", "br0", f"other-config:datapath-id={DPID}",
                 "fail_mode=secure", "other-config:disable-in-band=true",
                 "protocols=OpenFlow10,OpenFlow13", "--", "set-controller",
                 "br0", f"tcp:127.0.0.1:{ofp_port}")
        ctl = Controller(ofp_port, {DPID: sb.db_sock}, out / "controller.log")
        ctl.start()
        sb.ofctl("del-flows", "br0")
        time.sleep(2)
        base = mbufs_in_use(sb)
        sb.ofctl("add-flow", "br0", "in_port=1,actions=output:2")
        sb.ofctl("add-flow", "br0", "in_port=3,actions=output:2")
        pid = sb.vswitchd.pid

        t0 = time.time()
        end = t0 + minutes * 60
        next_cfg = next_port = next_sample = t0
        next_ctl = t0 + 30
        n_cfg, n_ctl, p3_until = 0, 0, None
        while time.time() < end:
            now = time.time()
            if now >= next_cfg:
                cfg = CONFIGS[n_cfg % len(CONFIGS)]
                sb.set_awafs("p1", **{"max-rate": RATE, **cfg})
                versions.append((cfg, []))
                n_cfg += 1
                next_cfg += 10
            if now >= next_ctl:
                ctl.stop(signal.SIGKILL if n_ctl % 2 == 0 else
                         signal.SIGTERM)
                try:
                    ctl.start()
                    got = ctl.port(DPID, "p1")["config"].get("queues")
                    if str(got) != str(cfg["queues"]):
                        problems.append(f"controller restart {n_ctl}: "
                                        f"p1 queues {got}, not "
                                        f"{cfg['queues']}")
                except RuntimeError as e:
                    problems.append(f"controller restart {n_ctl}: {e}")
                n_ctl += 1
                next_ctl += 60
            if now >= next_port:
                sb.add_dpdk_port("br0", "p3", "net_null3,no-rx=1", 4)
                sb.set_awafs("p3", **{"max-rate": 100000000})
                sb.ofctl("add-flow", "br0",
                         "priority=100,in_port=3,actions=output:2,output:4")
                p3_until = now + 20
                next_port += 30
            if p3_until and now >= p3_until:
                sb.vsctl("--if-exists", "del-port", "p3")   # Queued.
                sb.ofctl("--strict", "del-flows", "br0",
                         "priority=100,in_port=3")
                p3_until = None
            if now >= next_sample:
                _, details, _ = sb.qos_show("p1")
                row = {"t": round(now - t0, 1),
                       "rss_mib": rss_kib(pid) / 1024,
                       "mbufs": sb.mempool_in_use("p0"),
                       "version": int(details.get("thresholds-version", 0)),
                       "forwarded": forwarded(sb)}
                if rows and row["forwarded"] <= rows[-1]["forwarded"]:
                    problems.append(f"no packets forwarded by {row['t']} s")
                rows.append(row)
                versions[-1][1].append(row["version"])
                next_sample += 2
            time.sleep(0.1)

        if not sb.running():
            problems.append("ovs-vswitchd died")
        ctl.stop()
        sb.vsctl("--if-exists", "del-port", "p3")
        sb.ofctl("del-flows", "br0")
        sb.vsctl("clear", "port", "p1", "qos", "--", "--all", "destroy",
                 "qos")
        time.sleep(2)
        final = mbufs_in_use(sb)

    half = len(rows) // 2
    rss1 = max(r["rss_mib"] for r in rows[:half])
    rss2 = max(r["rss_mib"] for r in rows[half:])
    if rss2 > rss1 + 4:
        problems.append(f"RSS grew: {rss1:.1f} MiB, then {rss2:.1f} MiB")
    # Completions are the hosts' (trust=host): the pcap's flows have no
    # handshake, so the switch's own count reports none.
    last_adaptive = [v for cfg, v in versions
                     if cfg.get("mode") != "static" and "trust" not in cfg
                     and len(v) >= 3][-1]
    if last_adaptive[-1] <= last_adaptive[0]:
        problems.append(f"thresholds not recomputed: {last_adaptive}")

    with open(out / "soak.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    svg(rows, out / "soak.svg")
    summary = (f"soak: {minutes} min, {n_cfg} configurations, "
               f"{n_ctl} controller restarts, "
               f"{len(rows)} samples, {rows[-1]['forwarded']} packets "
               f"forwarded, RSS {rows[0]['rss_mib']:.1f} -> max {rss1:.1f} "
               f"(first half) / {rss2:.1f} MiB (second half), mbufs in use "
               f"{base} before and {final} after")
    return summary, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--out", default="build/soak")
    args = ap.parse_args()
    with one_switch_per_machine():
        summary, problems = soak(args.minutes, Path(args.out))
    print(summary)
    for p in problems:
        print("PROBLEM:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

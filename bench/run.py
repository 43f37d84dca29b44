"""`make bench`: every AWAFS benchmark, as CSV files and a markdown report in
build/bench/, ending with the lines

    awafs-adaptive-4q-64B-header cycles ratio: X.XX
    awafs-adaptive-4q-64B cycles ratio: X.XX

(AWAFS adaptive with 4 queues over no QoS, cycles per packet, median of the
ratios of many short runs; 64-byte frames, with the AWAFS header from
net_pcap, and without from net_null).

usage: python3 -m bench.run OUTDIR CORE_BENCH STOCK_VSWITCHD
"""

import csv
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import agent_cost, forwarding
from testbed.sim import window_deviation
from testbed.workload import workloads_dir

REPO = Path(__file__).resolve().parent.parent

RUNS, SECONDS = forwarding.RUNS, forwarding.SECONDS
ALL_AWAFS = ["no-qos", "egress-policer", "awafs-static-4q",
             "awafs-adaptive-2q", "awafs-adaptive-4q", "awafs-adaptive-8q"]
VHOST = ["no-qos", "egress-policer", "awafs-adaptive-4q"]
# (binary, source, size, PMDs, sink, configs)
MATRIX = [
    ("awafs", "null", 64, 1, "null", ALL_AWAFS),
    ("awafs", "pcap", 64, 1, "null", ALL_AWAFS),
    ("awafs", "null", 1518, 1, "null", ["no-qos", "awafs-adaptive-4q"]),
    ("awafs", "pcap", 1518, 1, "null", ["no-qos", "awafs-adaptive-4q"]),
    # Two PMDs sending to one port (both cores).
    ("awafs", "null", 64, 2, "null", ["no-qos", "egress-policer",
                                      "awafs-adaptive-4q"]),
    # The switch's own flow count, and TFS+ on top of it.
    ("awafs", "pcap", 64, 1, "null", ["no-qos", "awafs-adaptive-4q-switch",
                                      "awafs-adaptive-4q-tfs+"]),
    # Karuna's modes, on frames that carry Karuna words.
    ("awafs", "karuna", 64, 1, "null", ["no-qos", "awafs-adaptive-4q",
                                        "awafs-karuna-4q",
                                        "awafs-adaptive-4q-switch",
                                        "awafs-karuna-4q-aging"]),
    # Toward a guest: vhost-user ports, testpmd receiving on the other core;
    # with 2 PMDs a guest with 2 queue pairs.
    ("awafs", "null", 64, 1, "vhost", VHOST),
    ("awafs", "pcap", 64, 1, "vhost", VHOST),
    ("awafs", "null", 64, 2, "vhost", ["no-qos", "awafs-adaptive-4q"]),
    # Tunnelled: the pcap frames inside VXLAN (114 B around 64 B, 1518 B
    # around 1468 B), each inner flow its own outer UDP port.
    ("awafs", "vxlan", 114, 1, "null", ["no-qos", "awafs-adaptive-4q"]),
    ("awafs", "vxlan", 1518, 1, "null", ["no-qos", "awafs-adaptive-4q"]),
    ("stock", "null", 64, 1, "null", ["no-qos", "egress-policer"]),
    ("stock", "pcap", 64, 1, "null", ["no-qos", "egress-policer"]),
]
TARGETS = {"ratio": 1.10, "ratio_hdr": 1.20, "stretch": 1.05, "recalc_us": 50,
           "ring_mpps": 10, "memory": 1 << 20, "ratio_2pmd": 1.15,
           "scaling_2pmd": 1.8, "patched_vs_stock": 1.02}
STOCK_PAIRS = 10        # Alternated stock/patched switches, no QoS.


def patched_vs_stock(stock, pairs=STOCK_PAIRS):
    """Cycles per delivered packet without QoS, stock then patched binary,
    'pairs' times in turn (one switch at a time, a few seconds each), so
    that both see the same machine: rows with the pair's index."""
    rows, source = [], "null"
    for i in range(pairs):
        for binary in ("stock", "awafs"):
            r, _, _, _ = forwarding.run(source, 64, 5, SECONDS, ["no-qos"],
                                        stock if binary == "stock" else None)
            rows.append({"pair": i, "binary": binary,
                         "cycles": forwarding.summary(r, "no-qos")[0]})
    return rows


def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main():
    out, core_bench, stock = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    md = []

    # ---- core ----
    core = list(csv.DictReader(sh(core_bench).splitlines()))
    write_csv(out / "core.csv", core)

    # ---- forwarding ----
    fwd, recalc, guest_rx = [], {}, {}
    for binary, source, size, pmds, sink, configs in MATRIX:
        print(f"forwarding: {binary} {source} {size}B {pmds} PMD(s) to "
              f"{sink} ...", flush=True)
        rows, rc, _, grx = forwarding.run(
            source, size, RUNS, SECONDS, configs,
            stock if binary == "stock" else None, pmds=pmds, sink=sink)
        fwd += rows
        if grx and pmds > 1:
            guest_rx[(source, size, pmds)] = grx
        if rc and pmds == 1 and sink == "null":
            recalc[(source, size)] = rc
    write_csv(out / "forwarding.csv", fwd)
    print(f"patched vs stock, {STOCK_PAIRS} alternated pairs ...", flush=True)
    pairs = patched_vs_stock(stock)
    write_csv(out / "stock-pairs.csv", pairs)

    # ---- host agent ----
    print("host agent cost ...", flush=True)
    agent = agent_cost.run(runs=3, seconds=3.0)
    write_csv(out / "agent.csv", agent)

    # ---- window accuracy ----
    window = []
    for cdf in sorted(workloads_dir().glob("*.cdf")):
        for pcts in ([10, 20, 30, 40, 50, 60, 70], [1, 5, 25, 50, 75, 95, 99]):
            for w_ms, t_ms in ((256, 208), (250, 200)):
                window.append({"workload": cdf.name,
                               "percentiles": "/".join(map(str, pcts)),
                               "window_ms": w_ms, "interval_ms": t_ms,
                               "max_deviation_pct": 100 * window_deviation(
                                   cdf, pcts, w_ms, t_ms)})
    write_csv(out / "window.csv", window)

    # ---- report ----
    def fwd_rows(binary, source, size, pmds=1, sink="null"):
        return [r for r in fwd
                if (r["binary"], r["source"], r["size"], r["pmds"],
                    r["sink"]) == (binary, source, size, pmds, sink)]

    md.append("# AWAFS benchmark report\n")
    md.append(f"Generated by `make bench` (bench/run.py) in "
              f"{time.time() - started:.0f} s on {time.strftime('%Y-%m-%d')}."
              " Raw data: `core.csv`, `forwarding.csv`, `agent.csv`, `window.csv`.\n")
    md.append("## Machine and versions\n")
    cpu = [ln.split(":", 1)[1].strip()
           for ln in Path("/proc/cpuinfo").read_text().splitlines()
           if ln.startswith("model name")]
    md.append(f"- CPU: {cpu[0] if cpu else '?'} ({len(cpu)} cores), "
              f"kernel {platform.release()}")
    md.append(f"- patched: `{sh(str(REPO / 'build/bin/ovs-vswitchd'), '--version').splitlines()[0]}`, "
              f"stock: `{sh(stock, '--version').splitlines()[0]}` (Debian "
              "openvswitch-switch-dpdk), "
              f"{sh(stock, '--version').splitlines()[-1]}")
    md.append(f"- commit `{sh('git', '-C', str(REPO), 'rev-parse', '--short', 'HEAD')}`\n")

    md.append("## Forwarding cost\n")
    md.append(f"One PMD polls p0 and sends to one net_null port (no rx) per "
              f"configuration; {RUNS} runs, in each a slice of "
              f"{SECONDS} s per configuration, chosen by an OpenFlow rule; "
              "cycles/packet is the PMDs' processing cycles (`avg processing "
              "cycles per packet` × packets received, from "
              "`dpif-netdev/pmd-stats-show`) over the packets that left the "
              "measured port (its tx counter), and Mpps what left it. "
              "Median [min, max]; the ratio is "
              "to no QoS in the same run of the same binary (the median of "
              "the runs' ratios). `null`: frames of zeros (no AWAFS header); "
              "`pcap`: TCP frames with the AWAFS option, one in ten a "
              "completion; `karuna`: those with a Karuna word too (a third "
              "each of deadline, known-size and unknown-size flows; 66 B "
              "frames); `vxlan`: the `pcap` frames inside VXLAN (114 B "
              "frames around 64 B ones, 1518 B around 1468 B; each inner "
              "flow its own outer UDP source port). With 2 PMDs both cores "
              "each poll a copy of p0 and "
              "send to the same port. Output `vhost`: the ports are "
              "vhost-user ports whose guest, dpdk-testpmd on core 0, "
              "receives and drops, with as many queue pairs as PMDs (with 2 "
              "PMDs core 0 runs a PMD and the guest). Command: `python3 "
              "-m bench.forwarding --source SRC --size N [--pmds 2] "
              "[--sink vhost]`.\n")
    md.append("| binary | frames | PMDs | output | config | cycles/packet | "
              "Mpps | ratio |")
    md.append("|---|---|---|---|---|---|---|---|")
    for binary, source, size, pmds, sink, configs in MATRIX:
        rows = fwd_rows(binary, source, size, pmds, sink)
        for name in configs:
            c, cmin, cmax, mpps, r, rmin, rmax = forwarding.summary(rows,
                                                                    name)
            md.append(f"| {binary} | {source} {size} B | {pmds} | {sink} | "
                      f"{name} | {c:.1f} [{cmin:.1f}, {cmax:.1f}] | "
                      f"{mpps:.2f} | {r:.3f} [{rmin:.3f}, {rmax:.3f}] |")
    for (source, size, pmds), grx in guest_rx.items():
        md.append(f"\nWhat the {pmds}-queue guest received on each rx queue "
                  f"({source} {size} B, {pmds} PMDs, all runs): " + "; ".join(
                      f"{name} " + " / ".join(f"{n:,}" for n in counts)
                      for name, counts in grx.items()) + ".")
    pair_ratios = [
        next(r["cycles"] for r in pairs
             if r["pair"] == i and r["binary"] == "awafs")
        / next(r["cycles"] for r in pairs
               if r["pair"] == i and r["binary"] == "stock")
        for i in range(STOCK_PAIRS)]
    stock_ratio = statistics.median(pair_ratios)
    md.append(f"\nNo QoS, patched vs stock binary (null 64 B, "
              f"{STOCK_PAIRS} alternated pairs of switches, 5 slices each; "
              f"`stock-pairs.csv`): median ratio {stock_ratio:.3f} "
              f"[{min(pair_ratios):.3f}, {max(pair_ratios):.3f}].\n")

    md.append("## Recalculation\n")
    for (source, size), d in recalc.items():
        md.append(f"- Under full PMD load ({source} {size} B, "
                  f"awafs-adaptive-4q, 10 s): " + forwarding.recalc_line(d))
    md.append("\nCore micro-benchmarks (`build/bench/core-bench`, no OVS):\n")
    md.append("| benchmark | variant | value | unit |")
    md.append("|---|---|---|---|")
    for r in core:
        md.append(f"| {r['benchmark']} | {r['variant']} | {r['value']} | "
                  f"{r['unit']} |")

    md.append("\n## Host agent cost\n")
    md.append("iperf3 TCP between two network namespaces over a veth pair "
              "(no switch, TSO/GSO on), 3 runs × 3 s, median; ratio to no "
              "agent in the same run. Command: `python3 -m bench.agent_cost`."
              "\n")
    md.append("| sender | Gbit/s | ratio |")
    md.append("|---|---|---|")
    for name in agent_cost.CONFIGS:
        g, q, qmin, qmax = agent_cost.summary(agent, name)
        md.append(f"| {name} | {g:.2f} | {q:.3f} [{qmin:.3f}, {qmax:.3f}] |")

    md.append("\n## Window accuracy: histogram vs exact\n")
    md.append("Largest relative difference between the thresholds of the "
              "two windows over every update of a 3 s simulation "
              "(`awafs-sim`, 4000 completions/s, 8 queues). With W = 256 ms "
              "and T = 208 ms both windows hold the same completions, so only "
              "bucketing differs (bound 0.78 %); with W = 250 ms, T = 200 ms "
              "the histogram window also holds up to W/16 more time.\n")
    md.append("| workload | percentiles | W/T (ms) | max deviation |")
    md.append("|---|---|---|---|")
    for w in window:
        md.append(f"| {w['workload']} | {w['percentiles']} | "
                  f"{w['window_ms']}/{w['interval_ms']} | "
                  f"{w['max_deviation_pct']:.2f} % |")

    ratio = forwarding.summary(fwd_rows("awafs", "null", 64),
                               "awafs-adaptive-4q")[4]
    ratio_hdr = forwarding.summary(fwd_rows("awafs", "pcap", 64),
                                   "awafs-adaptive-4q")[4]
    ratio_2pmd = forwarding.summary(fwd_rows("awafs", "null", 64, 2),
                                    "awafs-adaptive-4q")[4]
    mpps_1pmd = forwarding.summary(fwd_rows("awafs", "null", 64),
                                   "awafs-adaptive-4q")[3]
    mpps_2pmd = forwarding.summary(fwd_rows("awafs", "null", 64, 2),
                                   "awafs-adaptive-4q")[3]
    scaling = mpps_2pmd / mpps_1pmd
    ratio_vhost = [forwarding.summary(fwd_rows("awafs", src, 64, 1, "vhost"),
                                      "awafs-adaptive-4q")[4]
                   for src in ("null", "pcap")]
    core_val = {(r["benchmark"], r["variant"]): float(r["value"])
                for r in core}
    recalc_64k = core_val[("recalc",
                           "histogram window 64000 samples 8 queues")]
    recalc_64k_exact = core_val[("recalc",
                                 "exact window 64000 samples 8 queues")]
    ring = core_val[("ring", "1 producer(s) push attempts per producer")]
    ring2 = core_val[("ring", "2 producer(s) push attempts per producer")]
    ring_c = core_val[("ring", "1 producer(s) vs flat-out consumer push "
                               "attempts per producer")]
    mem = core_val[("memory", "histogram window (defaults)")]
    md.append("\n## Targets\n")
    md.append("| target | measured | met |")
    md.append("|---|---|---|")
    md.append(f"| awafs adaptive 4q, 64 B, 1 PMD: ≤ 1.10× no QoS without "
              f"header, ≤ 1.20× with | "
              f"{ratio:.2f}× without header, {ratio_hdr:.2f}× with header | "
              f"{'yes' if ratio <= TARGETS['ratio'] else 'no'} without "
              f"header, "
              f"{'yes' if ratio_hdr <= TARGETS['ratio_hdr'] else 'no'} "
              f"with |")
    md.append(f"| two PMDs sending to one awafs port: ≤ 1.15× the cycles "
              f"per delivered packet of no QoS with the same threads | "
              f"{ratio_2pmd:.2f}× (without header) | "
              f"{'yes' if ratio_2pmd <= TARGETS['ratio_2pmd'] else 'no'} |")
    md.append(f"| two PMDs deliver ≥ 1.8× what one PMD delivers through an "
              f"awafs port (counted at the port) | {mpps_2pmd:.2f} vs "
              f"{mpps_1pmd:.2f} Mpps, {scaling:.2f}× | "
              f"{'yes' if scaling >= TARGETS['scaling_2pmd'] else 'no'} |")
    md.append(f"| patched no-QoS path ≤ 1.02× stock's (alternated pairs) | "
              f"{stock_ratio:.3f}× | "
              f"{'yes' if stock_ratio <= TARGETS['patched_vs_stock'] else 'no'}"
              " |")
    md.append(f"| toward a guest (vhost-user): cost per packet as a ratio "
              f"to no QoS on the same port type | {ratio_vhost[0]:.2f}× "
              f"without header, {ratio_vhost[1]:.2f}× with | — |")
    vhost2 = {name: forwarding.summary(fwd_rows("awafs", "null", 64, 2,
                                                "vhost"), name)[3]
              for name in ("no-qos", "awafs-adaptive-4q")}
    grx = guest_rx.get(("null", 64, 2), {}).get("awafs-adaptive-4q", [])
    md.append(f"| toward a 2-queue guest, 2 PMDs: Mpps delivered with and "
              f"without awafs, the guest's rx queues | "
              f"{vhost2['awafs-adaptive-4q']:.2f} vs "
              f"{vhost2['no-qos']:.2f} Mpps "
              f"({vhost2['awafs-adaptive-4q'] / vhost2['no-qos']:.2f}×); "
              f"with awafs {' / '.join(f'{n:,}' for n in grx)} packets | — |")

    def added(source, size):
        rows = fwd_rows("awafs", source, size)
        return (forwarding.summary(rows, "awafs-adaptive-4q")[0]
                - forwarding.summary(rows, "no-qos")[0])
    md.append(f"| the inner parse of tunnelled frames | awafs adds "
              f"{added('vxlan', 114):.1f} cycles/packet to 114 B VXLAN "
              f"frames, {added('pcap', 64):.1f} to the same 64 B frames "
              f"untunnelled; {added('vxlan', 1518):.1f} to 1518 B VXLAN, "
              f"{added('pcap', 1518):.1f} to 1518 B untunnelled | — |")
    md.append(f"| recalculation never on a PMD; ≤ 50 µs per port for a 64k "
              f"window | dedicated `awafs` thread; {recalc_64k:.1f} µs "
              f"(histogram, default), {recalc_64k_exact:.0f} µs (exact) | "
              f"{'yes' if recalc_64k <= TARGETS['recalc_us'] else 'no'} |")
    md.append(f"| ring ≥ 10 M pushes/s per producer, never blocking | "
              f"{ring:.1f} M/s (1 producer), {ring2:.1f} M/s each (2); "
              f"{ring_c:.1f} M/s against a consumer draining flat out on "
              f"the other core | 1 producer: "
              f"{'yes' if ring >= TARGETS['ring_mpps'] else 'no'}; 2 "
              f"contending: {'yes' if ring2 >= TARGETS['ring_mpps'] else 'no'}"
              " |")
    md.append(f"| memory per port fixed, ≤ 1 MiB at defaults | {mem:.0f} "
              f"bytes (histogram window + 4 queues × 1024 slots) | "
              f"{'yes' if mem <= TARGETS['memory'] else 'no'} |")

    (out / "report.md").write_text("\n".join(md) + "\n")
    print(f"report: {out / 'report.md'}")
    print(f"awafs-adaptive-4q-64B-header cycles ratio: {ratio_hdr:.2f}")
    print(f"awafs-adaptive-4q-64B cycles ratio: {ratio:.2f}")


if __name__ == "__main__":
    main()

"""Forwarding cost of the awafs QoS type, as a ratio to no QoS measured in
the same ovs-vswitchd, and the recalculation period under that load.

One PMD forwards p0 as fast as it can to one of several net_null output
ports (no rx), one per configuration, each with its QoS set once.  p0 is
either net_null (frames of zeros: not IP, so no AWAFS header) or net_pcap
looping TCP frames ("tcp": without the option, as from a host without the
agent; "pcap": with the AWAFS option, one in ten a completion; "karuna": and
a Karuna word, a third each of deadline, known-size and unknown-size
flows; "vxlan": the pcap frames inside VXLAN, 50 bytes more); frames are
64 or 1518 bytes (the Karuna word makes them 66; VXLAN frames are 114 or
1518 bytes, around 64- or 1468-byte TCP frames).  A run measures each
configuration in turn for a short slice (the OpenFlow rule sends p0's
frames to its port; then the PMD statistics are
cleared, and after 'seconds' 'avg processing cycles per packet' and the
packet rate are read), and a configuration's ratio is to the no-QoS slice of
the same run, a second or so apart.  Only p0 is polled.  This machine's
speed drifts by tens of percent over seconds (other tenants of its host), so
many short runs and their median ratio say more than a few long ones.

With --sink vhost the output ports are vhost-user ports
(dpdkvhostuserclient) instead, and one dpdk-testpmd on the other core is
their guest, receiving and dropping what they send (testbed/vhost.py).

usage: python3 -m bench.forwarding [--source null|tcp|pcap|karuna|vxlan]
           [--size 64|114|1518]
           [--sink null|vhost] [--pmds 1|2] [--runs N] [--seconds S]
           [--configs A,B] [--vswitchd PATH] [--csv FILE] [--perf CONFIG]

--perf CONFIG profiles the PMD thread (perf record -e cpu-clock) for 5 s
under CONFIG after the runs and prints the symbols with >= 0.5 % of its
samples: the profiles in docs/design.md come from it.
"""

import argparse
import contextlib
import csv
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from testbed.ovs_sandbox import OvsSandbox, one_switch_per_machine
from testbed.switch import tx_packets, wait_until
from testbed.vhost import Guest, add_vhost_port

CONFIGS = {
    "no-qos": None,
    "egress-policer": {"type": "egress-policer",
                       "cir": 10 ** 12, "cbs": 10 ** 9},
    "awafs-static-4q": {"queues": 4, "mode": "static"},
    "awafs-adaptive-2q": {"queues": 2},
    "awafs-adaptive-4q": {"queues": 4},
    "awafs-adaptive-8q": {"queues": 8},
    # Marking as for DCTCP (what it reads of every frame; little is queued).
    "awafs-adaptive-4q-ecn": {"queues": 4, "ecn-threshold": 20},
    # The switch's own flow table on every packet (trust=switch).
    "awafs-adaptive-4q-switch": {"queues": 4, "trust": "switch"},
    # ... and TFS+ on it (tardy flows to queue 0 below 100 kB).
    "awafs-adaptive-4q-tfs+": {"queues": 4, "trust": "switch",
                               "tardy": "tfs+"},
    # Karuna: three flow types, two windows; and aging in the flow table.
    "awafs-karuna-4q": {"queues": 4, "karuna": "on"},
    "awafs-karuna-4q-aging": {"queues": 4, "karuna": "on",
                              "trust": "switch", "aging": "on"},
}


RUNS, SECONDS = 30, 0.3


def write_pcap(path, size, karuna=False, vxlan=False, option=True):
    """100 distinct 'size'-byte TCP frames with the AWAFS option (62 bytes
    of headers, 66 for a completion; without it if not 'option') and, with
    'karuna', a Karuna word (4 bytes more): a deadline, a size or neither,
    in turn.  With 'vxlan' the frames are the inner frames of 'size'-byte
    VXLAN frames (50 bytes less)."""
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    from testbed.traffic import VXLAN_OVERHEAD, tcp_frame, vxlan_frame
    inner = size - VXLAN_OVERHEAD if vxlan else size
    frames = []
    for i in range(100):
        done = i % 10 == 9
        word = [20 << 20 | 100, 100, 0][i % 3] if karuna else None
        payload = max(inner - (66 if done else 62) - (4 if karuna else 0), 0)
        if option:
            frame = tcp_frame(
                bytes_sent=i * 1000,
                flow_size=i * 1000 + payload if done else None,
                sport=1000 + i, payload=payload, karuna=word)
        else:
            # 54 bytes of Ethernet, IPv4 and TCP headers.
            frame = tcp_frame(sport=1000 + i, payload=inner - 54)
        # The outer UDP source port from the inner flow, as Linux and OVS
        # choose it: one datapath flow per inner flow, as untunnelled.
        frames.append(Ether(vxlan_frame(frame, sport=49152 + i) if vxlan
                            else frame))
    wrpcap(str(path), frames)


def apply(sb, name, port):
    """Sets configuration 'name' on 'port'."""
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
    sb.vsctl("set", "port", port, "qos=@q", "--", "--id=@q", "create", "qos",
             f"type={qtype}", *kv)


def route(sb, ofport):
    """Sends the sources' frames (p0's, and p00's with two PMDs) to OpenFlow
    port 'ofport' from now on."""
    for in_port in (1, 99):
        sb.ofctl("add-flow", "br0",
                 f"in_port={in_port},actions=output:{ofport}")


def measure(sb, seconds, ofport):
    """(cycles per delivered packet, Mpps delivered, Mpps received) of all
    PMDs together: their processing cycles over what left 'ofport'."""
    sb.appctl("dpif-netdev/pmd-stats-clear")
    tx0 = tx_packets(sb, ofport)
    time.sleep(seconds)
    out = sb.appctl("dpif-netdev/pmd-stats-show")
    delivered = tx_packets(sb, ofport) - tx0
    cycles = packets = 0
    for pmd in out.split("pmd thread")[1:]:
        n = int(re.search(r"packets received: (\d+)", pmd).group(1))
        m = re.search(r"avg processing cycles per packet: ([\d.]+)", pmd)
        if n and m:
            cycles += float(m.group(1)) * n
            packets += n
    return (cycles / max(delivered, 1), delivered / seconds / 1e6,
            packets / seconds / 1e6)


def pmd_tid(sb):
    """The thread id of the switch's (single) PMD thread."""
    for task in Path(f"/proc/{sb.vswitchd.pid}/task").iterdir():
        if (task / "comm").read_text().startswith("pmd"):
            return int(task.name)
    raise RuntimeError("no PMD thread")


def profile(sb, seconds=5):
    """perf's flat profile of the PMD thread: [(percent, symbol)]."""
    data = Path(sb.dir) / "perf.data"
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o",
                    str(data), "-t", str(pmd_tid(sb)), "--", "sleep",
                    str(seconds)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    out = subprocess.run(["perf", "report", "-i", str(data), "--stdio",
                          "--sort", "symbol", "--percent-limit", "0.5"],
                         check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
        if m:
            rows.append((float(m.group(1)), m.group(2)))
    return rows


@contextlib.contextmanager
def bench_switch(source, size, names, vswitchd=None, pmds=1, sink="null",
                 wrapper=(), extra_config=None):
    """A switch whose PMDs poll only the 'source' frames (p0, and p00 with
    two PMDs) and one output port per configuration in 'names' (keys of
    CONFIGS), its QoS set; nothing routed yet (route()).  Yields (sb,
    ports, guest): ports maps a configuration to its (port, ofport), guest
    is the testpmd guest of the vhost sink (None with the null sink), for
    the caller to stop.  'wrapper' runs ovs-vswitchd under a tool, with
    'extra_config' in its Open_vSwitch other_config."""
    tmp = Path(tempfile.mkdtemp(prefix="awafs-bench-"))
    if source in ("tcp", "pcap", "karuna", "vxlan"):
        write_pcap(tmp / "in.pcap", size, karuna=source == "karuna",
                   vxlan=source == "vxlan", option=source != "tcp")
        src = f"net_pcap0,rx_pcap={tmp / 'in.pcap'},infinite_rx=1"
    else:
        src = f"net_null0,size={size}"
    guest = None
    with OvsSandbox(vswitchd=vswitchd, wrapper=wrapper,
                    extra_config=extra_config,
                    pmd_cpu_mask="0x3" if pmds == 2 else "0x2") as sb:
        sb.add_bridge()
        # The PMDs poll only the sources (pinned, so isolated): the output
        # ports' empty rx queues would add their polls to every
        # configuration.
        sources = [("p0", 1, src, 1)]
        if pmds == 2:
            sources.append(("p00", 99, src.replace("0,", "99,", 1), 0))
        for name, ofport, devargs, core in sources:
            sb.add_dpdk_port("br0", name, devargs, ofport)
            sb.vsctl("set", "Interface", name,
                     f"other_config:pmd-rxq-affinity=0:{core}")
        ports = {}
        for name in dict.fromkeys(names):
            i = len(ports) + 1
            ports[name] = (f"p{i}", i + 1)
            if sink == "vhost":
                add_vhost_port(sb, f"p{i}", tmp / f"p{i}.sock", i + 1)
            else:
                sb.add_dpdk_port("br0", f"p{i}", f"net_null{i},no-rx=1",
                                 i + 1)
            apply(sb, name, f"p{i}")
        if sink == "vhost":
            guest = Guest([tmp / f"{port}.sock" for port, _ in
                           ports.values()], tmp / "testpmd.log", queues=pmds)
            guest.start()
            if not wait_until(lambda: sb.log().count(
                    "virtio is now ready for processing") >= len(ports), 30):
                guest.stop()
                raise RuntimeError(f"the guest did not connect: {tmp}")
        sb.ofctl("del-flows", "br0")
        yield sb, ports, guest
    # Kept only when a run fails (the guest's log, the frames).
    shutil.rmtree(tmp)


def run(source="null", size=64, runs=RUNS, seconds=SECONDS, names=None,
        vswitchd=None, perf=None, pmds=1, sink="null"):
    """Measures 'names' (keys of CONFIGS) alternately in one switch.
    Returns (rows, recalc, prof, guest_rx): one row per run and config with
    cycles, Mpps and the ratio to no-qos of the same run; recalc is the
    awafs-adaptive-4q qos/show details after 10 s at full load (None if not
    measured); prof the profile under config 'perf' (None if not asked);
    guest_rx, with the vhost sink and 2 PMDs, what the guest received on
    each of its rx queues per config over the whole run (None otherwise).
    With pmds=2 both cores run a PMD, each polling its own copy of p0 (p0
    and p00), and both send to the configuration's port.  With sink="vhost"
    the output ports are vhost-user ports with a testpmd guest, with as many
    queue pairs as PMDs."""
    names = names or list(CONFIGS)
    rows, recalc, prof, guest_rx = [], None, None, None
    with bench_switch(source, size, names + ([perf] if perf else []),
                      vswitchd, pmds, sink) as (sb, ports, guest):
        route(sb, ports[names[0]][1])
        time.sleep(1)
        for i in range(runs):
            for name in names:
                route(sb, ports[name][1])
                time.sleep(0.2)
                cycles, mpps, rx_mpps = measure(sb, seconds,
                                                ports[name][1])
                rows.append({"binary": "stock" if vswitchd else "awafs",
                             "source": source, "size": size, "pmds": pmds,
                             "sink": sink,
                             "run": i,
                             "config": name, "cycles": cycles,
                             "mpps": mpps, "rx_mpps": rx_mpps})
        # The recalculation thread's timing with the PMD at full load.
        if "awafs-adaptive-4q" in names:
            route(sb, ports["awafs-adaptive-4q"][1])
            time.sleep(10)
            recalc = sb.qos_show(ports["awafs-adaptive-4q"][0])[1]
        if perf:
            route(sb, ports[perf][1])
            time.sleep(1)
            prof = profile(sb)
        if guest:
            guest.stop()
            streams = guest.received_by_stream()
            # The guest's port i is the i-th output port added.
            guest_rx = {name: [streams.get((i, q), 0) for q in range(pmds)]
                        for i, name in enumerate(ports)}

    base = {r["run"]: r["cycles"] for r in rows if r["config"] == "no-qos"}
    for r in rows:
        r["ratio"] = r["cycles"] / base[r["run"]] if r["run"] in base else ""
    return rows, recalc, prof, guest_rx


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
    ap.add_argument("--source",
                    choices=["null", "tcp", "pcap", "karuna", "vxlan"],
                    default="null")
    ap.add_argument("--size", type=int, choices=[64, 114, 1518], default=64)
    ap.add_argument("--vswitchd", help="another ovs-vswitchd binary")
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--seconds", type=float, default=SECONDS)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--csv")
    ap.add_argument("--pmds", type=int, choices=[1, 2], default=1)
    ap.add_argument("--sink", choices=["null", "vhost"], default="null")
    ap.add_argument("--perf", choices=list(CONFIGS),
                    help="profile the PMD under this config")
    args = ap.parse_args()
    names = args.configs.split(",")

    # Tests, soaks and other benches use the same machine-wide names.
    with one_switch_per_machine():
        rows, recalc, prof, guest_rx = run(
            args.source, args.size, args.runs, args.seconds, names,
            args.vswitchd, args.perf, args.pmds, args.sink)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    print(f"source={args.source} {args.size}B, sink={args.sink}, "
          f"{args.pmds} PMD(s), "
          f"{args.runs} runs x "
          f"{args.seconds}s; median [min, max]")
    print(f"{'config':<20} {'cycles/pkt':>22} {'Mpps':>8} {'ratio':>20}")
    for name in names:
        c, cmin, cmax, mpps, r, rmin, rmax = summary(rows, name)
        print(f"{name:<20} {c:7.1f} [{cmin:6.1f},{cmax:6.1f}] {mpps:8.2f} "
              f"{r:5.3f} [{rmin:.3f},{rmax:.3f}]")
    if guest_rx and args.pmds > 1:
        for name in names:
            print(f"guest rx queues under {name}: "
                  f"{', '.join(map(str, guest_rx[name]))} packets")
    if recalc:
        print("recalculation under load (awafs-adaptive-4q, 10 s): "
              + recalc_line(recalc))
    if prof:
        print(f"PMD profile under {args.perf} (perf, cpu-clock, 5 s):")
        for pct, sym in prof:
            print(f"  {pct:5.1f}%  {sym}")


if __name__ == "__main__":
    main()

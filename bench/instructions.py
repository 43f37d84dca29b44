"""Instructions per packet of each forwarding configuration, counted by
valgrind's callgrind on the PMD thread: a measure of the datapath's work
that the machine's speed does not move.

bench/forwarding.py's cycles are what make bench's targets are stated in,
but this machine's speed drifts by tens of percent for minutes (other
tenants of its host), which hides a change of a few cycles.  The
instructions a packet takes do not drift: the same switch, configuration
and frames give the same count to a fraction of a percent, so a change of
the per-packet path can be weighed in one run, and the functions that
differ from no QoS show where a configuration's cost is.  They are not
cycles: a cache miss or a mispredicted branch costs cycles and no
instructions, so this measure complements forwarding.py's, it does not
replace it.

The same set-up as forwarding.py (bench_switch()), with ovs-vswitchd run
under callgrind and DPDK on ordinary memory (valgrind cannot map its
hugepage areas).  For each configuration in turn the frames are routed to
its port, and after a warm-up the PMD thread's counters are zeroed, and
dumped 'seconds' later (callgrind_control).  Packets are the calls of
miniflow_extract() in that dump: once per received packet for these
sources (not for VXLAN, whose packets pass the datapath twice), and these
configurations send all they receive.  (The port's tx counter cannot
stand in: the commands reach valgrind up to seconds late on a busy
machine.)  Every flow enters the exact-match cache on its first miss, so
that two runs find the same flows there.  Under valgrind the
switch forwards about 0.3 Mpps, and valgrind offers no AVX-512: glibc's
string functions take their AVX2 versions where this CPU would run the
EVEX ones (OVS's AVX-512 datapath functions are not its default anyway).
What the PMD does by time rather than by packet (each port's QoS tick, the
sweep of a flow table for idle flows) falls on about a hundred times fewer
packets than natively: every port of the switch adds to every
configuration's count (an idle port with trust=switch about 20
instructions a packet), so configurations are compared within one switch.

usage: python3 -m bench.instructions [--source null|tcp|pcap|karuna]
           [--size 64|1518] [--configs A,B] [--vswitchd PATH]
           [--seconds S] [--top N] [--keep]
"""

import argparse
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.forwarding import CONFIGS, bench_switch, route
from testbed.ovs_sandbox import one_switch_per_machine

PACKET_FN = "miniflow_extract"     # Called once per packet received.
WARMUP_S = 2


def parse_dump(path):
    """(Ir of the thread, {function: self Ir}, {function: calls to it}) of
    one callgrind dump, functions by name, inlined code counted in the
    function it is inlined into."""
    names, self_ir, calls = {}, Counter(), Counter()
    fn = callee = None
    total = 0
    skip_next = False
    for line in Path(path).read_text(errors="replace").splitlines():
        m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == "fn":
                fn = names[m.group(2)]
            else:
                callee = names[m.group(2)]
            continue
        if line.startswith("calls="):
            calls[callee] += int(line.split("=")[1].split()[0])
            # The cost line after it is the call's inclusive cost.
            skip_next = True
            continue
        if line.startswith("summary:"):
            total = int(line.split()[1])
            continue
        m = re.match(r"[+\-*]?\d*\s+(\d+)$", line)
        if m and fn:
            if not skip_next:
                self_ir[fn] += int(m.group(1))
            skip_next = False
    return total, self_ir, calls


def pmd_dump(files):
    """The dump among 'files' (one per thread) of the PMD thread."""
    for f in files:
        if "pmd_thread_main" in f.read_text(errors="replace"):
            return f
    raise RuntimeError("no dump names pmd_thread_main(): an ovs-vswitchd "
                       "without symbols (Debian's stock binary is stripped)"
                       " cannot be counted")


def callgrind_control(pid, *args):
    subprocess.run(["callgrind_control", *args, str(pid)], check=True,
                   capture_output=True, timeout=120)


def run(source="null", size=64, names=None, vswitchd=None, seconds=3.0,
        keep=False):
    """{config: (Ir per packet, packets, {function: self Ir per packet})}
    for 'names'.  With 'keep' the dumps stay (their folder is printed), for
    callgrind_annotate to read by source line."""
    names = names or ["no-qos", "awafs-adaptive-4q"]
    out = Path(tempfile.mkdtemp(prefix="awafs-callgrind-"))
    # Fair scheduling: valgrind runs one thread at a time, and without it
    # the busy PMD starves the main thread that takes the configuration.
    wrapper = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
               "--fair-sched=yes",
               f"--callgrind-out-file={out}/cg.%p",
               f"--log-file={out}/valgrind.log"]
    results = {}
    # Every flow in the exact-match cache from its first packet on: by
    # default a miss inserts at random (1 in 100), and the flows that are
    # not in it yet cost more instructions in one run than in another.
    with bench_switch(source, size, names, vswitchd, wrapper=wrapper,
                      extra_config={"emc-insert-inv-prob": "1"}) as (
                          sb, ports, _):
        pid = sb.vswitchd.pid
        for n, name in enumerate(names, start=1):
            route(sb, ports[name][1])
            time.sleep(WARMUP_S)
            callgrind_control(pid, "-z")
            time.sleep(seconds)
            callgrind_control(pid, "-d", name)
            total, self_ir, calls = parse_dump(
                pmd_dump(sorted(out.glob(f"cg.{pid}.{n}-*"))))
            packets = calls[PACKET_FN]
            if not packets:
                raise RuntimeError(f"{name}: no packet in the dump")
            results[name] = (total / packets, packets,
                             {f: ir / packets for f, ir in self_ir.items()})
    if keep:
        print(f"callgrind's dumps: {out}")
    else:
        # Kept only when a run fails.
        shutil.rmtree(out)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", choices=["null", "tcp", "pcap", "karuna"],
                    default="null")
    ap.add_argument("--size", type=int, choices=[64, 1518], default=64)
    ap.add_argument("--configs", default="no-qos,awafs-adaptive-4q")
    ap.add_argument("--vswitchd", help="another ovs-vswitchd binary")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--top", type=int, default=12,
                    help="functions listed per configuration")
    ap.add_argument("--keep", action="store_true",
                    help="keep callgrind's dumps (cg.PID.N-THREAD, N the "
                    "configuration's place in --configs)")
    args = ap.parse_args()
    names = args.configs.split(",")
    for name in names:
        if name not in CONFIGS:
            ap.error(f"unknown configuration {name}")
    with one_switch_per_machine():
        results = run(args.source, args.size, names, args.vswitchd,
                      args.seconds, args.keep)
    base = results[names[0]]
    print(f"source={args.source} {args.size}B, 1 PMD, callgrind, "
          f"{args.seconds} s a configuration; ratio to {names[0]}")
    print(f"{'config':<26} {'instr/pkt':>10} {'ratio':>7} {'packets':>9}")
    for name in names:
        ipp, packets, _ = results[name]
        print(f"{name:<26} {ipp:10.1f} {ipp / base[0]:7.3f} {packets:9d}")
    for name in names[1:] if args.top else []:
        fns = results[name][2]
        delta = {f: fns.get(f, 0) - base[2].get(f, 0)
                 for f in set(fns) | set(base[2])}
        print(f"\n{name} against {names[0]}: the functions that differ "
              f"most, instructions per packet (self, inlined code in its "
              f"caller)")
        for f in sorted(delta, key=lambda f: -abs(delta[f]))[:args.top]:
            print(f"  {delta[f]:+8.1f}  {fns.get(f, 0):8.1f}  {f}")


if __name__ == "__main__":
    main()

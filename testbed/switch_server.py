"""A patched switch to try the controller with, in the foreground until
Ctrl-C or SIGTERM: the sandboxed ovsdb-server and ovs-vswitchd
(testbed/ovs_sandbox.py), bridge br0 with datapath ID 0000000000000001
and one DPDK port, dpdk0 (net_null: it drops what it is sent), whose
OpenFlow controller is CONTROLLER and whose OVSDB also listens on OVSDB.

With --traffic, something to watch: a second DPDK port, traffic0 (on a
veth pair, awtg0/awtg0p), takes AWAFS-tagged TCP frames (docs/header.md)
that this process sends at RATE frames a second, and br0 forwards them to
dpdk0, whose awafs QoS (TRAFFIC_QOS: 4 queues, shaped below the offered
load, a 1 s window) queues, drops and learns from them. The flows' sizes
alternate every PHASE seconds between two workloads, small flows (1-20 kB)
and large ones (20 kB-2 MB), so the learned thresholds move with them.

usage: build/venv/bin/python -m testbed.switch_server [--traffic]
           [--controller tcp:127.0.0.1:6653] [--ovsdb ptcp:6640:127.0.0.1]
           [--rate 1500] [--phase 10]
"""

import argparse
import itertools
import signal
import time

from testbed.ovs_sandbox import (OvsSandbox,
                                 one_switch_per_machine)
from testbed.traffic import RawPort, VethPair, tcp_frame
from testbed.workload import weyl_samples

DPID = "0000000000000001"
# The two workloads --traffic alternates, as CDFs [(size, p), ...].
WORKLOADS = {"small flows (1-20 kB)": [(1000, 0.0), (20000, 1.0)],
             "large flows (20 kB-2 MB)": [(20000, 0.0), (2000000, 1.0)]}
FLOWS_PER_WORKLOAD = 500        # Sizes drawn per workload, then repeated.
FRAMES_PER_FLOW = 6             # Spread over its bytes; the last completes.
PAYLOAD = 1000                  # Bytes of TCP payload per frame.
RATE = 1500                     # Frames a second (about 12.8 Mbit/s).
PHASE = 10.0                    # Seconds of each workload.
# dpdk0's QoS with --traffic: shaped to about 2/5 of the offered load, so
# that its queues fill and drop even when a busy machine slows the sender
# down; thresholds learned from the last second's completions, recomputed
# twice a second.
TRAFFIC_QOS = {"queues": 4, "percentiles": "10,20,30", "window-ms": 1000,
               "interval-ms": 500, "max-rate": 5000000, "buffer": 256}


def flow_frames(sizes, sport0=10000):
    """The frames of one flow per size in 'sizes': FRAMES_PER_FLOW frames
    whose bytes-sent step evenly through the flow, the last one its
    completion (the AWAFS option with its size)."""
    frames = []
    for i, size in enumerate(sizes):
        sport = sport0 + i % 50000
        for j in range(FRAMES_PER_FLOW - 1):
            frames.append(tcp_frame(bytes_sent=size * j // FRAMES_PER_FLOW,
                                    sport=sport, payload=PAYLOAD))
        frames.append(tcp_frame(bytes_sent=max(size - PAYLOAD, 0),
                                flow_size=size, sport=sport,
                                payload=PAYLOAD))
    return frames


def phase_frames():
    """Each workload's frames, in WORKLOADS' order."""
    return [flow_frames(weyl_samples(cdf, FLOWS_PER_WORKLOAD))
            for cdf in WORKLOADS.values()]


def add_traffic_port(sb, veth):
    """traffic0 on 'veth', its frames forwarded to dpdk0, which gets
    TRAFFIC_QOS.  Secure: the rule stays while the controller is away."""
    sb.add_af_packet_port("br0", "traffic0", veth.sw, 2)
    sb.vsctl("set", "bridge", "br0", "fail_mode=secure")
    sb.ofctl("add-flow", "br0", "in_port=2,actions=output:1")
    sb.set_awafs("dpdk0", **TRAFFIC_QOS)


def send_traffic(port, rate, phase, stopped):
    """Sends the workloads' frames on 'port', 'rate' frames a second, each
    workload for 'phase' seconds in turn, until 'stopped()'."""
    phases = phase_frames()
    batch = max(1, rate // 100)         # About 10 ms of frames at once.
    t0 = time.monotonic()
    for sent in itertools.count(0, batch):
        if stopped():
            return
        due = t0 + sent / rate
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        frames = phases[int((due - t0) // phase) % len(phases)]
        start = sent % len(frames)
        port.send(frames[start:start + batch])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--controller", default="tcp:127.0.0.1:6653")
    ap.add_argument("--ovsdb", default="ptcp:6640:127.0.0.1")
    ap.add_argument("--traffic", action="store_true",
                    help="send AWAFS-tagged flows through dpdk0")
    ap.add_argument("--rate", type=int, default=RATE,
                    help=f"--traffic's frames a second (default {RATE})")
    ap.add_argument("--phase", type=float, default=PHASE,
                    help="seconds of each workload (default %(default)s)")
    args = ap.parse_args()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    try:
        with one_switch_per_machine():
            veth = VethPair("awtg0") if args.traffic else None
            try:
                with OvsSandbox() as sb:
                    serve(sb, args, veth, lambda: stop)
            finally:
                if veth:
                    veth.delete()
    except KeyboardInterrupt:
        pass


def serve(sb, args, veth, stopped):
    sb.appctl_ovsdb("ovsdb-server/add-remote", args.ovsdb)
    sb.add_bridge()
    sb.add_dpdk_port("br0", "dpdk0", "net_null0,no-rx=1", 1)
    sb.vsctl("set", "bridge", "br0", f"other-config:datapath-id={DPID}",
             "protocols=OpenFlow10,OpenFlow13", "--", "set-controller",
             "br0", args.controller)
    print(f"switch {DPID}: bridge br0, port dpdk0; OpenFlow to "
          f"{args.controller}, OVSDB on {args.ovsdb} and "
          f"{sb.db_sock}; Ctrl-C stops it", flush=True)
    if not veth:
        while not stopped():
            signal.pause()
        return
    add_traffic_port(sb, veth)
    print(f"traffic: {args.rate} frames/s from traffic0 to dpdk0, "
          f"{' and '.join(WORKLOADS)} in turn for {args.phase:g} s each",
          flush=True)
    port = RawPort(veth.host)
    try:
        send_traffic(port, args.rate, args.phase, stopped)
    finally:
        port.close()


if __name__ == "__main__":
    main()

"""The shaper delivers its max-rate: iperf3 (Debian's) from h1 to h2
through the sandboxed switch, whose awafs port p2 toward h2 is shaped to
'max-rate', gets the goodput that rate allows for its frames.

'max-rate' is a wire rate: the shaper charges every frame its length and
the 24 bytes of preamble, inter-frame gap and FCS (AWAFS_WIRE_OVERHEAD,
lib/awafs.h).  A full-sized TCP segment with timestamps carries MSS = 1448
bytes of data in a 1514-byte frame (Ethernet 14, IPv4 20, TCP 20 with 12
of options), 1538 bytes on the wire, so the goodput allowed is max-rate x
MSS / 1538: 94.1 % of max-rate.  iperf3 reports its own MSS; the bound
follows from it."""

import json
import subprocess
import time

import pytest

from testbed.traffic import WIRE_OVERHEAD

ETH_HDR = 14
MTU = 1500
SECONDS = 5
OMIT = 1                # Slow start: not measured.
TOLERANCE = 0.03
ATTEMPTS = 3
# One PMD core forwards every frame, the other runs both hosts' TCP: at
# 1000 Mbit/s iperf3 needs most of that core.  On a quiet machine it got
# 0.9972 of what max-rate allows (938.9 Mbit/s); with two compilers and a
# benchmark of other work running beside it, 782 Mbit/s (the hosts' TCP
# short of CPU, not the shaper).  This runs in `make check`, alone.  The
# hosts' receive processing ran on the PMD's core until testbed/net.py kept
# it off: on the slow machine that cost up to 30 % of the goodput at
# 1000 Mbit/s (clean-clone CI: 907 Mbit/s; 676-932 here), since a shaper
# that cannot send while its PMD is busy elsewhere loses what its 1 ms of
# burst does not make up; since then 0.9966-0.9972 there too.
RATES = [25_000_000, 50_000_000, 100_000_000, 1_000_000_000]


def allowed_goodput(rate, mss):
    """Goodput (bit/s) of full-sized segments at wire rate 'rate'."""
    frame = MTU + ETH_HDR
    return rate * mss / (frame + WIRE_OVERHEAD)


def iperf3(hosts, rate):
    """Runs iperf3 h1 -> h2 (cubic, one stream) through p2 shaped to
    'rate'; returns (goodput in bit/s, the MSS, the sender's congestion
    control)."""
    sb, h1, h2 = hosts.sb, hosts.h1, hosts.h2
    sb.set_awafs("p2", queues=2, thresholds=10000, **{"max-rate": rate})
    server = h2.popen("iperf3", "-s", "-1", "-p", "5201",
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            if h2.run("ss", "-ltnH", "sport", "= :5201").stdout.strip():
                break
            time.sleep(0.1)
        out = h1.run("iperf3", "-c", h2.addr, "-p", "5201", "-C", "cubic",
                     "-t", str(SECONDS), "-O", str(OMIT), "-J",
                     timeout=SECONDS + OMIT + 60).stdout
    finally:
        server.wait(30)
        sb.vsctl("clear", "port", "p2", "qos", "--", "--all", "destroy",
                 "qos")
    res = json.loads(out)
    return (res["end"]["sum_received"]["bits_per_second"],
            res["start"]["tcp_mss_default"],
            res["end"]["sender_tcp_congestion"])


@pytest.mark.parametrize("rate", RATES)
def test_shaper_rate(hosts, rate):
    """Never more than max-rate allows, on any run; and within TOLERANCE
    of it on the best of ATTEMPTS runs: the shaper lets a backlog go only
    while the PMD runs, and a PMD the kernel preempts (other work on this
    2-core machine) loses what its 1 ms of burst cannot make up, never
    gains, so a low run is the machine's, a high one the shaper's."""
    best = 0
    for _ in range(ATTEMPTS):
        got, mss, cc = iperf3(hosts, rate)
        want = allowed_goodput(rate, mss)
        print(f"max-rate {rate / 1e6:g} Mbit/s, MSS {mss}, {cc}: goodput "
              f"{got / 1e6:.2f} Mbit/s, allowed {want / 1e6:.2f} Mbit/s "
              f"({got / want:.4f})")
        assert cc == "cubic"
        assert got <= (1 + TOLERANCE) * want, \
            f"{got / 1e6:.2f} Mbit/s, max-rate allows {want / 1e6:.2f}"
        best = max(best, got)
        if best >= (1 - TOLERANCE) * want:
            break
    assert best >= (1 - TOLERANCE) * want, \
        f"{best / 1e6:.2f} Mbit/s, max-rate allows {want / 1e6:.2f}"

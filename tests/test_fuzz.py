"""libFuzzer (ASan + UBSan) targets, each for a bounded run from its corpus
in tests/fuzz/corpus/ (`make fuzz` runs 10 M inputs each): the header parser
with the flow key extraction, and the switch's flow table fed with sequences
of segments.  The parser's corpus is also replayed through a running switch."""

import re
import subprocess
import time

import pytest

from tests.conftest import BUILD, REPO
from testbed.switch import bridge_output, wait_until
from testbed.traffic import Capture, tcp_frame

RUNS = 300000
CORPUS = REPO / "tests" / "fuzz" / "corpus"


@pytest.mark.parametrize("target", ["hdr", "flowtab"])
def test_fuzz_smoke(tmp_path, target):
    fuzzer = BUILD / "fuzz" / f"fuzz-{target}"
    assert fuzzer.exists(), f"{fuzzer} missing: run `make`"
    assert any((CORPUS / target).iterdir())
    proc = subprocess.run(
        [str(fuzzer), f"-runs={RUNS}", "-seed=1",
         f"-dict={REPO / 'tests/fuzz/awafs.dict'}", str(tmp_path),
         str(CORPUS / target)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"Done {RUNS} runs" in proc.stderr
    assert "ERROR: AddressSanitizer" not in proc.stderr
    assert "runtime error" not in proc.stderr


def rx_packets(sb):
    """Frames the switch received on p0 (OpenFlow port 1)."""
    out = sb.ofctl("dump-ports", "br0", "1")
    return int(re.search(r"rx pkts=(\d+)", out).group(1))


def test_parser_corpus_through_a_switch(sw):
    """The parser's corpus through the switch to an awafs port (trust=switch:
    the flow table sees the frames too).  The PMD keeps forwarding (a frame
    sent after them arrives), and the port accounts for every frame the
    bridge gave it: per queue sent + dropped + flushed + queued, and
    headerless + malformed within them; every frame the switch received
    reached the port.  The kernel side of the veth refuses a few malformed
    frames (a VLAN tag cut short, a bad IPv4 header) before the switch sees
    them: printed."""
    frames = [f.read_bytes() for f in sorted((CORPUS / "hdr").iterdir())]
    frames = [f for f in frames if 14 <= len(f) <= 1514]   # The veth's.
    sb = sw.sb
    sb.ofctl("add-flow", "br0", "priority=10,in_port=1,actions=output:2")
    sb.set_awafs("p1", trust="switch")
    before, rx_before = bridge_output(sb), rx_packets(sb)
    sw.src.send(frames, gap=0.0005)
    cap = Capture(sw.vout.host)
    sw.src.send([tcp_frame(bytes_sent=0, sport=7777, seq=1)])
    assert cap.wait_for(1, 2), "the PMD stopped forwarding"
    cap.stop()

    time.sleep(1.5)     # OpenFlow's rule counters follow within a second.
    rx = rx_packets(sb) - rx_before
    out = bridge_output(sb) - before
    assert 0.9 * len(frames) < rx <= len(frames) + 1 and out == rx
    assert wait_until(lambda: sb.qos_show("p1")[1]["backlog-packets"]
                      == "0", 5)
    _, details, queues = sb.qos_show("p1")
    enqueued = sum(int(q["enqueued-packets"]) for q in queues.values())
    sent = sum(int(q["tx_packets"]) for q in queues.values())
    dropped = sum(int(q["dropped-packets"]) + int(q["flushed-packets"])
                  for q in queues.values())
    assert enqueued == out == sent + dropped
    assert int(details["headerless"]) + int(details["malformed"]) <= out
    assert int(details["malformed"]) > 0
    sb.ofctl("--strict", "del-flows", "br0", "priority=10,in_port=1")
    print(f"corpus replay: {len(frames)} frames, {len(frames) + 1 - rx} "
          f"refused by the veth, "
          f"{details['headerless']} "
          f"headerless, {details['malformed']} malformed, {sent} sent, "
          f"{dropped} dropped")

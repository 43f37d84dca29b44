"""The AWAFS core's concurrent parts under ThreadSanitizer
(tests/tsan/stress-core.c): three producers into one completion ring, two
more each into a ring of its own (as OVS's tx queues), and the consumer that
takes them all into the window; and the scheduler's backlog read without the
lock while one thread queues and sends.  No data race reported, and every push and every
packet accounted for."""

import subprocess

from tests.conftest import BUILD


def test_core_concurrency_under_thread_sanitizer():
    stress = BUILD / "tsan" / "stress-core"
    assert stress.exists(), f"{stress} missing: run `make`"
    proc = subprocess.run([str(stress), "200000"], capture_output=True,
                          text=True, timeout=600)
    assert "ThreadSanitizer" not in proc.stderr, proc.stderr[-4000:]
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "dropped (ring full)" in proc.stdout

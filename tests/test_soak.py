"""The soak (tests/soak.py) for 2 minutes: mixed traffic, AWAFS
reconfigured every 10 s, a port added and deleted with packets queued every
30 s, the controller app killed and restarted at 30 s and 90 s.  No crash,
forwarding throughout, the controller back each time, mbufs back to the
baseline, RSS flat, thresholds still recomputed.  `make soak` runs it for
30 minutes."""

from tests.conftest import BUILD
from tests.soak import soak


def test_soak_two_minutes():
    summary, problems = soak(2, BUILD / "soak-check")
    print(summary)
    assert not problems, problems

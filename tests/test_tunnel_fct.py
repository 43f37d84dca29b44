"""bench/tunnel_fct.py's report without the switch: a delay a tunnel adds
to every flow shows in what a tenant sees but not in AWAFS's gain over
FIFO, and a tunnel that hides the flows from the classifier (AWAFS no
better than FIFO through it) takes the gain away."""

import random
import types

from bench import tunnel_fct

ARGS = types.SimpleNamespace(seeds=3, flows=40, load=50e6)


def fcts(awafs_ms, fifo_ms, tunnel_awafs_ms, tunnel_fifo_ms):
    """{(scheme, tunnel): {seed: FCTs}} around the given means."""
    rng = random.Random(3)
    means = {("awafs-pct10", "none"): awafs_ms, ("fifo", "none"): fifo_ms,
             ("awafs-pct10", "vxlan"): tunnel_awafs_ms,
             ("fifo", "vxlan"): tunnel_fifo_ms}
    return {key: {seed: [ms * rng.uniform(0.9, 1.1) for _ in range(40)]
                  for seed in range(1, 4)}
            for key, ms in means.items()}


def gain_row(text):
    line = next(l for l in text.splitlines() if "gain over FIFO" in l)
    return float(line.split("**")[1].split(" %")[0])


def test_a_constant_delay_leaves_the_gain():
    text = tunnel_fct.report("vxlan", fcts(1.0, 3.0, 1.5, 3.5), ARGS, 1)
    pooled = next(l for l in text.splitlines() if l.startswith("| pooled"))
    seen = float(pooled.split(" | ")[3].split(" %")[0])
    assert 45 < seen < 55               # 1.5 ms against 1.0.
    assert abs(gain_row(text)) < 5


def test_a_blind_classifier_loses_the_gain():
    text = tunnel_fct.report("vxlan", fcts(1.0, 3.0, 3.0, 3.0), ARGS, 1)
    assert gain_row(text) < -90

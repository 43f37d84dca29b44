"""sim/karuna_thresholds.py: Karuna's static thresholds (issue 17)."""

import subprocess
import sys

import numpy as np
import pytest

from sim import karuna_thresholds as kt
from testbed.workload import load_cdf

THIRDS = [1 / 3, 1 / 3, 1 / 3]


@pytest.mark.parametrize("k, rho", [(4, 0.6), (8, 0.8)])
def test_the_solution_beats_other_feasible_splits(k, rho):
    phi, theta, fun = kt.solve(k, rho, THIRDS)
    assert np.sum(phi) == pytest.approx(1 / 3, abs=1e-6)
    assert np.sum(theta) == pytest.approx(1 / 3, abs=1e-6)
    assert fun == pytest.approx(kt.objective(np.concatenate((phi, theta)),
                                             k, rho, 1 / 3))
    equal = np.full(2 * k, 1 / (3 * k))
    assert fun <= kt.objective(equal, k, rho, 1 / 3) + 1e-9
    rng = np.random.default_rng(7)
    for _ in range(50):
        x = np.concatenate((rng.dirichlet(np.ones(k)) / 3,
                            rng.dirichlet(np.ones(k)) / 3))
        assert fun <= kt.objective(x, k, rho, 1 / 3) + 1e-9


def test_thresholds_follow_the_workload(workloads):
    points = load_cdf(workloads / "websearch.cdf")
    _, theta, _ = kt.solve(8, 0.8, [0, 0, 1])
    alpha = kt.thresholds(points, theta, 1)
    assert len(alpha) == 7 and alpha == sorted(alpha)
    assert points[0][0] <= alpha[0] and alpha[-1] <= points[-1][0]
    # Without type 2 flows there is nothing to split.
    assert kt.thresholds(points, np.zeros(8), 0) == []


def test_command_line(workloads):
    cdf = str(workloads / "websearch.cdf")
    out = subprocess.run([sys.executable, "-m", "sim.karuna_thresholds",
                          "--cdf", cdf, "--load", "0.8", "--queues", "4"],
                         capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0].startswith("beta") and lines[1].startswith("alpha")
    assert len(lines[1].split(": ")[1].split(",")) == 3
    bad = subprocess.run([sys.executable, "-m", "sim.karuna_thresholds",
                          "--cdf", cdf, "--load", "0.8", "--shares", "1,1,1"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "add up to 1" in bad.stderr

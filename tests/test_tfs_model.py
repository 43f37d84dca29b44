"""sim/tfs_model.py, the TFS/TFS+ letter's M/G/1 model (issue 17)."""

import subprocess
import sys

import pytest

from sim import tfs_model
from testbed.workload import load_cdf


def test_moments_of_a_uniform_and_a_point_mass():
    # Half the flows exactly 100 bytes, half uniform in [100, 300].
    points = [(100, 0.5), (300, 1.0)]
    p, m1, m2 = tfs_model.moments(points)
    assert p == pytest.approx(1.0)
    assert m1 == pytest.approx(0.5 * 100 + 0.5 * 200)
    assert m2 == pytest.approx(0.5 * 100 ** 2 + 0.5 * (100 ** 2 + 100 * 300
                                                       + 300 ** 2) / 3)
    p, m1, _ = tfs_model.moments(points, hi=200)
    assert p == pytest.approx(0.75) and m1 == pytest.approx(50 + 0.25 * 150)


def test_one_class_is_pollaczek_khinchine():
    rate, s1, s2 = 0.5, 1.0, 3.0
    ((above, wait),) = tfs_model.priority_delays([(rate, s1, s2)])
    assert above == 0
    assert wait == pytest.approx(rate * s2 / (2 * (1 - rate * s1)))


@pytest.fixture(scope="module")
def cdfs(workloads):
    return {name: load_cdf(workloads / f"{name}.cdf")
            for name in ("cache", "datamining")}


def test_without_loss_nothing_changes(cdfs):
    f = tfs_model.factors(cdfs["cache"], 0.5, loss=0.0)
    assert f["tfs", "normal"] == pytest.approx(1.0)
    assert f["tfs+", "normal"] == pytest.approx(1.0)


def test_the_letters_findings(cdfs):
    """Fig. 2 (w = 0.1): TFS+ always gains, up to its bound 1 + eta = 2
    (1.99x at 0.9 on data mining); TFS gains on data mining but degrades
    tardy flows of the cache workload at load 0.1; normal flows lose a
    little; the gain grows with the load."""
    for name, points in cdfs.items():
        prev = 0
        for load in tfs_model.LOADS:
            f = tfs_model.limit_factors(points, load, 0.1, 100e3, 1)
            assert 1 < f["tfs+", "tardy"] <= 2
            assert 0.85 < f["tfs", "normal"] <= 1
            assert f["tfs+", "normal"] == pytest.approx(1, abs=0.01)
            assert f["tfs", "tardy"] >= prev
            prev = f["tfs", "tardy"]
    f = tfs_model.limit_factors(cdfs["datamining"], 0.9, 0.1, 100e3, 1)
    assert f["tfs+", "tardy"] == pytest.approx(1.99, abs=0.02)
    assert f["tfs", "tardy"] == pytest.approx(1.82, abs=0.05)
    assert tfs_model.factors(cdfs["datamining"], 0.1)["tfs", "tardy"] > 1
    assert tfs_model.factors(cdfs["cache"], 0.1)["tfs", "tardy"] < 1


def test_command_line(workloads):
    out = subprocess.run(
        [sys.executable, "-m", "sim.tfs_model", "--cdf",
         workloads / "cache.cdf", "--loads", "0.5,0.95"],
        capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[1].split()[:2] == ["cache", "0.50"]
    assert "unstable" in out.splitlines()[2]
    bad = subprocess.run(
        [sys.executable, "-m", "sim.tfs_model", "--cdf",
         workloads / "cache.cdf", "--loss", "1"],
        capture_output=True, text=True)
    assert bad.returncode == 2 and "--loss" in bad.stderr

"""Flow-size workloads: the CDF files in ../shared/workloads and samples of
them.  Independent of the C code, so tests can check the core against it."""

import os
from pathlib import Path


def workloads_dir():
    """shared/workloads beside the repository, or under $AWAFS_SHARED."""
    repo = Path(__file__).resolve().parent.parent
    return Path(os.environ.get("AWAFS_SHARED", repo.parent / "shared")) \
        / "workloads"


def weyl_samples(points, n, start=0):
    """n flow sizes from a CDF [(size, p), ...] at the low-discrepancy
    sequence u_i = frac(i * golden ratio), linear interpolation (as
    sim/awafs-sim.c does)."""
    golden = 0.6180339887498949
    out = []
    for i in range(start, start + n):
        u = (i * golden) % 1.0
        out.append(round(inverse_cdf(points, u)))
    return out


def load_cdf(path):
    points = []
    for line in open(path):
        if line.strip() and not line.startswith("#"):
            size, prob = line.split()
            points.append((float(size), float(prob)))
    return points


def inverse_cdf(points, p):
    """Flow size at cumulative probability p, interpolating linearly."""
    for i, (size, prob) in enumerate(points):
        if p <= prob:
            if i == 0 or prob == points[i - 1][1]:
                return size
            s0, p0 = points[i - 1]
            return s0 + (p - p0) / (prob - p0) * (size - s0)
    return points[-1][0]

"""Karuna's static thresholds (seed 003, Appendix A): the splitting
thresholds {beta} of type 2 flows (known size) and the sieving thresholds
{alpha} of type 3 flows (unknown size) that minimise the mean FCT of both
types, for a workload CDF, a load and the share of each flow type.

    python3 -m sim.karuna_thresholds --cdf ../shared/workloads/websearch.cdf \
        --load 0.8 [--queues 8] [--shares 1/3,1/3,1/3]

The objective is the appendix's: with phi_j (theta_j) the fraction of all
flows that are type 2 (type 3) flows of priority j, and F1 the share of
type 1 (deadline) flows, which take the top queue,

    T_j = rho / (1 - rho (F1 + sum_{i<j} (phi_i + theta_i)))
    min  sum_j phi_j T_j + sum_j theta_j sum_{m<=j} theta_m T_m

subject to phi, theta >= 0, sum phi = F2, sum theta = F3 (the printed
T_j^(2) and T_j^(3) are phi_j T_j and theta_j T_j).  The appendix then
relaxes this to a quadratic program by dropping the denominators; that
relaxation is degenerate -- sum phi_j is the constant F2, and
sum_j theta_j sum_{i<j} theta_i = (F3^2 - sum theta_j^2) / 2 is smallest with
every type 3 flow in one queue -- so this tool solves the problem before
the relaxation instead, with SciPy's SLSQP from several starting points
(Debian's python3-scipy).  The thresholds are the CDF's sizes at the
cumulative fractions: beta_j = F^-1(sum_{i<=j} phi_i / F2), and alike for
alpha (each type's sizes follow the workload's CDF).
"""

import argparse
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from testbed.workload import inverse_cdf, load_cdf

STARTS = 20


def objective(x, k, rho, f1):
    """The appendix's mean FCT bound for x = (phi_1..phi_k, theta_1..k)."""
    phi, theta = x[:k], x[k:]
    above = f1 + np.concatenate(([0.0], np.cumsum(phi + theta)[:-1]))
    t = rho / np.maximum(1 - rho * above, 1e-9)
    return float(np.sum(phi * t) + np.sum(theta * np.cumsum(theta * t)))


def solve(k, rho, shares, seed=1):
    """The fractions (phi, theta) of the best of STARTS local optima."""
    f1, f2, f3 = shares
    rng = np.random.default_rng(seed)
    cons = [{"type": "eq", "fun": lambda x: np.sum(x[:k]) - f2},
            {"type": "eq", "fun": lambda x: np.sum(x[k:]) - f3}]
    best = None
    for _ in range(STARTS):
        x0 = np.concatenate((rng.dirichlet(np.ones(k)) * f2,
                             rng.dirichlet(np.ones(k)) * f3))
        r = minimize(objective, x0, args=(k, rho, f1), method="SLSQP",
                     bounds=[(0, 1)] * (2 * k), constraints=cons,
                     options={"maxiter": 500, "ftol": 1e-12})
        if r.success and (best is None or r.fun < best.fun):
            best = r
    if best is None:
        raise RuntimeError("SLSQP found no solution")
    x = np.clip(best.x, 0, None)
    return x[:k], x[k:], best.fun


def thresholds(points, fractions, share):
    """The k-1 sizes (bytes) at the cumulative 'fractions' of a type whose
    flows are 'share' of all flows."""
    if share <= 0:
        return []
    cum = np.cumsum(fractions)[:-1] / share
    return [round(inverse_cdf(points, min(max(p, 0.0), 1.0))) for p in cum]


def parse_shares(text):
    shares = [float(Fraction(s)) for s in text.split(",")]
    if len(shares) != 3 or min(shares) < 0 or abs(sum(shares) - 1) > 1e-6:
        raise ValueError("three non-negative shares that add up to 1")
    return shares


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cdf", required=True, type=Path,
                    help="workload CDF (size bytes, cumulative p)")
    ap.add_argument("--load", required=True, type=float)
    ap.add_argument("--queues", type=int, default=8,
                    help="strict-priority queues for types 2 and 3 "
                    "(default 8)")
    ap.add_argument("--shares", default="1/3,1/3,1/3",
                    help="shares of type 1, 2 and 3 flows (default 1/3 each)")
    args = ap.parse_args(argv)
    if not 0 < args.load < 1:
        ap.error("--load must be in (0, 1)")
    if not 2 <= args.queues <= 8:
        ap.error("--queues must be between 2 and 8")
    try:
        shares = parse_shares(args.shares)
    except ValueError as e:
        ap.error(f"--shares: {e}")
    points = load_cdf(args.cdf)
    phi, theta, fun = solve(args.queues, args.load, shares)
    print(f"beta (type 2, split by size): "
          f"{','.join(map(str, thresholds(points, phi, shares[1])))}")
    print(f"alpha (type 3, sieved by bytes sent): "
          f"{','.join(map(str, thresholds(points, theta, shares[2])))}")
    print(f"objective: {fun:.6f}")


if __name__ == "__main__":
    main()

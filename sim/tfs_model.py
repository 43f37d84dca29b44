"""The TFS/TFS+ letter's flow-level model (seed 004, section 2-4): the factor
by which TFS and TFS+ improve the mean FCT of short flows, tardy and
normal, over a scheduler that ignores tardiness, for a workload CDF, a load
and a loss probability.

The network is one M/G/1 queue served at rate 1 (byte per time unit).
Flows arrive as a Poisson process at rate lambda with sizes S from the CDF,
load rho = lambda E[S].  A flow is lost with probability w and then sent
again whole, so the transmissions arrive at lambda / (1 - w); a tardy flow
is retransmitted eta times (the letter's eta = 1).

- Baseline (FCFS, eq. 1-3): every transmission waits the Pollaczek-Khinchine
  delay Q' = lambda' E[S^2] / (2 (1 - rho')); a normal flow of size s takes
  s + Q', a tardy one s + (1 + eta) Q'.
- TFS: retransmissions (rate w lambda / (1 - w), sizes S) get strict
  priority H over first transmissions L (rate lambda).
- TFS+: only retransmissions of flows below S_L (the fraction kappa = F(S_L)
  of flows) get H; the rest of the traffic is L.

Between the classes a strict priority queue serves flows preemptively
(the preemptive-resume priority M/G/1 queue; sigma_k is the load of
classes 1..k, R_k = sum_{i<=k} lambda_i E[S_i^2] / 2):
- a first transmission of size s in L is delayed
  s sigma_H / (1 - sigma_H) + R_L / ((1 - sigma_H)(1 - sigma_L)): eq. (1)
  and (2) with the class's delay for E[Q'];
- a retransmission is delayed, as the letter writes E[Q''] for TFS and TFS+,
  by the class's mean time in the system,
  E[S_k] / (1 - sigma_{k-1}) + R_k / ((1 - sigma_{k-1})(1 - sigma_k)),
  whose first term, the mean size of the flows retransmitted in H, is how
  the letter charges TFS for large tardy flows blocking short ones.
A short tardy flow takes s + E[Q'] + eta E[Q''] (eq. 3, 5, 7), a normal one
s + E[Q'] (eq. 4, 6).

Factor of improvement = E[FCT baseline] / E[FCT TFS or TFS+], over short flows
(s < S_L), as in the letter's Fig. 2 (w = 0.1, loads 0.1-0.9) and Fig. 3.
At rho = 0.9 and w = 0.1 the baseline's load rho / (1 - w) is 1: the tool
reports the limit as the load approaches it (the letter's 1.99x for TFS+).

    python3 -m sim.tfs_model --cdf ../shared/workloads/datamining.cdf
"""

import argparse
from pathlib import Path

from testbed.workload import load_cdf

LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def moments(points, lo=0.0, hi=float("inf")):
    """(P, E[S; lo <= S < hi], E[S^2; lo <= S < hi]) of a piecewise-linear
    CDF [(size, p), ...]: the probability of the range and the partial first
    and second moments (not divided by P).  Sizes are uniform between
    points; a step in p at one size, and the first point's p, are point
    masses (as testbed.workload.inverse_cdf() samples them)."""
    prob = m1 = m2 = 0.0
    prev_s, prev_p = points[0][0], 0.0
    for s, p in points:
        mass = p - prev_p
        if mass > 0:
            a, b = (s, s) if s == prev_s else (prev_s, s)
            # The part of [a, b] inside [lo, hi), uniform over [a, b].
            x, y = max(a, lo), min(b, hi)
            if a == b:
                if lo <= a < hi:
                    prob += mass
                    m1 += mass * a
                    m2 += mass * a * a
            elif x < y:
                part = mass * (y - x) / (b - a)
                prob += part
                m1 += part * (x + y) / 2
                m2 += part * (x * x + x * y + y * y) / 3
        prev_s, prev_p = s, p
    return prob, m1, m2


def priority_delays(classes):
    """The delays in each class of a preemptive-resume priority M/G/1 queue
    at rate 1, for delay(): (sigma above the class, the class's mean
    wait).  'classes' is [(rate, E[S], E[S^2]), ...], highest first."""
    out, sigma, r = [], 0.0, 0.0
    for rate, s1, s2 in classes:
        above = sigma
        sigma += rate * s1
        r += rate * s2 / 2
        if sigma >= 1:
            out.append(float("inf"))
            continue
        out.append((above, r / ((1 - above) * (1 - sigma))))
    return out


def delay(d, size):
    """The delay beyond its own service of a flow of 'size' in a class of
    priority_delays()."""
    if d == float("inf"):
        return d
    above, wait = d
    return size * above / (1 - above) + wait


def time_in_system(d, mean):
    """The mean time in the system of a class of priority_delays() whose
    flows have the mean size 'mean'."""
    return delay(d, mean) + mean


def factors(points, load, loss=0.1, s_l=100e3, eta=1):
    """{(scheduler, 'tardy'|'normal'): factor of improvement of the mean FCT
    of flows below s_l} at 'load' and loss probability 'loss'."""
    _, e1, e2 = moments(points)
    kappa, k1, k2 = moments(points, hi=s_l)
    short = k1 / kappa                  # E[S | S < S_L]
    lam = load / e1
    tx = lam / (1 - loss)               # Transmissions, retransmissions too.

    (base,) = priority_delays([(tx, e1, e2)])
    base_norm = short + delay(base, short)
    base_tardy = short + (1 + eta) * delay(base, short)

    retx = tx - lam
    schedulers = {
        "tfs": [(retx, e1, e2), (lam, e1, e2)],
        # Short retransmissions only; L is the rest of the transmissions.
        "tfs+": [(retx * kappa, k1 / kappa, k2 / kappa),
                 (tx - retx * kappa,
                  (tx * e1 - retx * k1) / (tx - retx * kappa),
                  (tx * e2 - retx * k2) / (tx - retx * kappa))],
    }
    out = {}
    for name, classes in schedulers.items():
        high, low = priority_delays(classes)
        norm = short + delay(low, short)
        tardy = norm + eta * time_in_system(high, classes[0][1])
        out[name, "normal"] = base_norm / norm
        out[name, "tardy"] = base_tardy / tardy
    return out


def baseline_load(load, loss):
    """The load of the baseline's one queue: retransmissions raise it to
    rho / (1 - w)."""
    return load / (1 - loss)


def stable(load, loss):
    return baseline_load(load, loss) < 1


def limit_factors(points, load, loss, s_l, eta, eps=1e-9):
    """factors(), or its limit as the load approaches 'load' from below when
    the baseline is unstable there (rho / (1 - w) = 1)."""
    if stable(load, loss):
        return factors(points, load, loss, s_l, eta)
    return factors(points, (1 - loss) * (1 - eps), loss, s_l, eta)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cdf", required=True, type=Path, action="append",
                    help="workload CDF (size bytes, cumulative p); "
                    "repeat for several")
    ap.add_argument("--loads", default=",".join(map(str, LOADS)))
    ap.add_argument("--loss", type=float, default=0.1,
                    help="loss probability w (default 0.1)")
    ap.add_argument("--short", type=float, default=100e3,
                    help="S_L, bytes (default 100000)")
    ap.add_argument("--eta", type=int, default=1,
                    help="retransmissions of a tardy flow (default 1)")
    args = ap.parse_args()
    if not 0 <= args.loss < 1:
        ap.error("--loss must be in [0, 1)")

    print("workload load  TFS-tardy TFS-normal TFS+-tardy TFS+-normal")
    for path in args.cdf:
        points = load_cdf(path)
        for load in (float(x) for x in args.loads.split(",")):
            if not 0 < load < 1:
                ap.error(f"load {load} is not in (0, 1)")
            if baseline_load(load, args.loss) > 1:
                print(f"{path.stem:8} {load:4.2f}  unstable "
                      f"(load / (1 - w) > 1)")
                continue
            f = limit_factors(points, load, args.loss, args.short, args.eta)
            print(f"{path.stem:8} {load:4.2f}  {f['tfs', 'tardy']:9.2f} "
                  f"{f['tfs', 'normal']:10.2f} {f['tfs+', 'tardy']:10.2f} "
                  f"{f['tfs+', 'normal']:11.2f}")


if __name__ == "__main__":
    main()

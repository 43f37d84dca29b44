"""Runs build/bin/awafs-sim (the core driven by a workload) and parses its
CSV output."""

import csv
import io
import subprocess
from pathlib import Path

SIM = Path(__file__).resolve().parent.parent / "build" / "bin" / "awafs-sim"


def run_sim(*args):
    """Rows of {'t_ms', 'workload', 'version', 'samples', 'thr': [...]}."""
    proc = subprocess.run([str(SIM), "--csv", *map(str, args)],
                          capture_output=True, text=True, timeout=120,
                          check=True)
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    for r in rows:
        r["t_ms"] = int(r["t_ms"])
        r["version"] = int(r["version"])
        r["thr"] = [int(v) for k, v in r.items() if k.startswith("thr")]
    return rows


def window_deviation(cdf, percentiles, window_ms, interval_ms, rate=4000,
                     duration_ms=3000):
    """Largest relative difference, over all updates and thresholds, between
    the histogram window's thresholds and the exact window's, same input."""
    common = ["--queues", len(percentiles) + 1,
              "--percentiles", ",".join(map(str, percentiles)),
              "--workload", cdf, "--rate", rate,
              "--duration-ms", duration_ms, "--window-ms", window_ms,
              "--interval-ms", interval_ms]
    exact = run_sim(*common, "--window-type", "exact")[1:]
    hist = run_sim(*common, "--window-type", "histogram")[1:]
    return max(abs(h - e) / e
               for re, rh in zip(exact, hist)
               for e, h in zip(re["thr"], rh["thr"]))

"""make eval's experiments, by name: how each one's runs run (its bench,
how one run is measured, how long it takes, how --scale shrinks it) and
how the report shows them (its summary rows and its section).  eval/run.py
and eval/report.py go through EXPERIMENTS, in its order, and nothing
else names an experiment."""

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from eval import report
from testbed.flowbench import PORT
from testbed.flowgen import cdf_mean
from testbed.workload import load_cdf, workloads_dir

REPO = Path(__file__).resolve().parent.parent
RATE = 100000000
MICRO_MEAN_BYTES = 0.8 * 10000 + 0.2 * 1000000


def cdf_path(workload):
    """The shared workloads', or one of eval/workloads/."""
    own = REPO / "eval" / "workloads" / f"{workload}.cdf"
    return own if own.exists() else workloads_dir() / f"{workload}.cdf"


@lru_cache(maxsize=None)
def mean_bytes(workload):
    return cdf_mean(load_cdf(cdf_path(workload)))


@dataclass(frozen=True)
class Experiment:
    name: str
    # params -> (kind of bench, its constructor): runs of one kind share
    # a bench.
    bench: Callable
    # (bench, params) -> (flow rows, {port: thresholds}, port stats).
    measure: Callable
    seconds: Callable       # params -> expected duration (s)
    scale: Callable         # (params, factor) -> None: --scale
    rows: Callable          # [report.Run] -> summary rows
    section: Callable       # (rows, [report.Run], out) -> markdown lines


# ---- the micro benchmark (testbed/micro.py) -----------------------------

def micro_bench(params):
    from testbed.micro import MicroBench
    return (("micro", params["transport"]),
            lambda: MicroBench(params["transport"]))


def micro_measure(bench, params):
    r = bench.measure(params["scheme"], params["flows"],
                      params["load"] * RATE, RATE,
                      seed=params.get("seed", 1))
    return r.rows, {"p0": [(t, [v]) for t, v in r.thresholds]}, \
        {"p0": bench.port_stats}


def micro_seconds(params):
    return params["flows"] * MICRO_MEAN_BYTES * 8 / (
        params["load"] * RATE) + 10


def micro_scale(params, scale):
    params["flows"] = max(20, int(params["flows"] * scale))


# ---- the leaf-spine fabric (testbed/leafspine.py) -----------------------

def hetero_bench(params):
    from testbed.leafspine import LeafSpineBed
    return ("hetero",), LeafSpineBed


def hetero_measure(bench, params):
    rows, samples = bench.measure(
        params["qos"], params["load"], RATE,
        lambda w, bps: bps / (8 * mean_bytes(w)), params["seconds"],
        seed=params.get("seed", 1))
    return rows, samples, bench.port_stats


def hetero_seconds(params):
    return params["seconds"] + 30


def hetero_scale(params, scale):
    params["seconds"] = max(5, params["seconds"] * scale)


# ---- the project's generator on the four hosts (testbed/flowbench.py) ---

def flow_bench(params):
    from testbed.flowbench import FlowBench
    transport = params.get("transport", "dctcp")
    karuna = params.get("karuna")
    return (("flowbench", transport, karuna),
            lambda: FlowBench(transport=transport,
                              karuna=list(karuna) if karuna else None))


def flow_measure(bench, params):
    rows, thresholds = bench.measure(
        params["qos"], [(cdf_path(w), n) for w, n in params["phases"]],
        params["load"] * RATE, RATE, seed=params.get("seed", 1),
        per_flow=params.get("per_flow", False))
    if params.get("karuna"):
        # Each flow's Karuna spec, from its server: its type and deadline.
        spec = {f"{h.addr}:{PORT}": k or ""
                for h, k in zip(bench.senders, params["karuna"])}
        for r in rows:
            r["karuna"] = spec[r["server"]]
    return rows, {"p0": thresholds}, {"p0": bench.port_stats}


def flow_seconds(params):
    """Its arrivals and set-up (the largest data-mining flows can outlast
    the arrivals by a minute or more)."""
    return sum(n * mean_bytes(w) * 8 / (params["load"] * RATE)
               for w, n in params["phases"]) + 10


def flow_scale(params, scale):
    params["phases"] = [(w, max(20, int(n * scale)))
                        for w, n in params["phases"]]


def flow_experiment(name, rows, section):
    return Experiment(name, flow_bench, flow_measure, flow_seconds,
                      flow_scale, rows, section)


EXPERIMENTS = {e.name: e for e in [
    Experiment("micro", micro_bench, micro_measure, micro_seconds,
               micro_scale, report.micro_rows, report.micro_section),
    flow_experiment("shift", report.shift_rows, report.shift_section),
    flow_experiment("pias", report.pias_rows, report.pias_section),
    Experiment("hetero", hetero_bench, hetero_measure, hetero_seconds,
               hetero_scale, report.hetero_rows, report.hetero_section),
    flow_experiment("tardy", report.tardy_rows, report.tardy_section),
    flow_experiment("karuna", report.karuna_rows, report.karuna_section),
]}

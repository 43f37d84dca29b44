"""Regenerates the evaluation report from the runs' files (eval/run.py).

    python3 -m eval.report [--out DIR]

Reads DIR/runs/EXPERIMENT/RUN.csv (flows), RUN.json (parameters, port
counters) and RUN.thr.csv (thresholds over time); writes DIR/summary.csv
(one row per run and flow class), DIR/report.md (tables per experiment) and
PNG plots beside them:

- micro (§5.3): mean and p99 FCT of short (10 kB) and long (1000 kB) flows
  per load and scheme; the threshold over time from 1 kB, 10 kB and
  1000 kB;
- shift (§5.4): the thresholds over time for 2, 3 and 4 queues, static and
  AWAFS; FCT per workload phase;
- pias (§5.5) and hetero (§5.6): per workload and load, mean FCT of small
  (<= 100 kB), medium (<= 10 MB) and large flows and overall, p99 of small
  flows, mean slowdown, and the flows that suffered a retransmission
  timeout, and of them the spurious ones (flow_stats()); hetero also per
  workload of the host pair;
- tardy (seed 004): per workload and load, mean and p99 FCT of short flows
  (<= 100 kB) that lost a packet (tardy: the server's TCP sent some of the
  response again) under AWAFS alone, the same flows in every scheme
  (tardy_rows()), and of the others, TFS and TFS+ against AWAFS alone,
  beside the factors of improvement of the letter's model
  (sim/tfs_model.py) at the loss the run measured;
- karuna (seed 003): per load and scheme, the deadline-miss rate, mean and
  p95 FCT of type-1 (deadline) flows and the mean and p95 FCT of type-2
  (known size) and type-3 (unknown size) flows, all and small
  (<= 100 kB); for the Long Flow runs also the large ones (> 5 MB),
  without and with aging.
"""

import argparse
import csv
import json
import re
import statistics
import sys
from pathlib import Path

from sim import tfs_model
from testbed import markdown
from testbed.flowgen import (REQ, karuna_deadline_ms,
                             karuna_spec)
from testbed.micro import percentile as nearest_rank
from testbed.senderbed import carried_bps
from testbed.workload import load_cdf, workloads_dir

REPO = Path(__file__).resolve().parent.parent

SHORT_MAX = 100000          # The thesis's short flows, in every experiment.
SETTLED_S = 5               # A learning scheme's start-up is over by then.
SEED_SUFFIX = re.compile(r"-seed(\d+)$")   # eval/run.py's name of seed S.
CLASSES = [("small", 0, SHORT_MAX), ("medium", SHORT_MAX, 10000000),
           ("large", 10000000, float("inf")), ("all", 0, float("inf"))]
MICRO_CLASSES = [("short", 10000), ("long", 1000000)]
# The thesis's mismatched PIAS thresholds per workload (§5.5.1-5.5.4).
MISMATCHED = {"websearch": "pias-datamining", "datamining": "pias-websearch",
              "hadoop": "pias-datamining", "cache": "pias-datamining"}
FIELDS = ["experiment", "run", "transport", "workload", "load", "scheme",
          "phase", "class", "flows", "mean_ms", "p99_ms", "slowdown",
          "timeout_flows", "spurious_timeout_flows", "dropped",
          "ecn_marks", "tardy_share", "p95_ms", "miss_pct"]


def percentile(v, p):
    """testbed.micro's nearest-rank quantile; NaN for no values."""
    return nearest_rank(v, p) if v else float("nan")


def p99(v):
    return percentile(v, 0.99)


def mean(v):
    return statistics.mean(v) if v else float("nan")


class Run:
    def __init__(self, path):
        self.key = path.stem
        with open(path) as f:
            self.flows = list(csv.DictReader(f))
        self.meta = json.loads(path.with_suffix(".json").read_text())
        self.thresholds = {}            # port: [(t, [bytes, ...])]
        with open(path.with_suffix(".thr.csv")) as f:
            for r in csv.DictReader(f):
                self.thresholds.setdefault(r["port"], []).append(
                    (float(r["t_s"]), [int(v) for v in
                                       r["thresholds"].split()]))

    def port_totals(self):
        ports = self.meta.get("ports", {}).values()
        return {"dropped": sum(p["dropped"] for p in ports),
                "ecn_marks": sum(p["ecn_marks"] for p in ports)}


def load_runs(out, exp):
    return [Run(p) for p in sorted((out / "runs" / exp).glob("*.csv"))
            if not p.name.endswith(".thr.csv")]


def base_row(exp, run, **extra):
    m = run.meta
    return {"experiment": exp, "run": run.key,
            "transport": m.get("transport", "dctcp"),
            "workload": m.get("workload", exp), "load": round(m["load"] * 100),
            "scheme": m["scheme"], **run.port_totals(), **extra}


def flow_stats(flows):
    """The summary columns of a class of flows: count, mean and p99 FCT,
    mean slowdown, flows that had a retransmission timeout and, of them,
    those whose server then received a duplicate SACK (runs that logged
    them): the client had the data it sent again, so the timeout was
    spurious (a segment or its ACK late, not lost); the others lost a
    segment."""
    fct = [int(r["fct_us"]) / 1000 for r in flows]
    timed_out = [r for r in flows if int(r["timeouts"]) > 0]
    stats = {"flows": len(flows), "mean_ms": mean(fct), "p99_ms": p99(fct),
             "slowdown": mean([float(r["slowdown"]) for r in flows]),
             "timeout_flows": len(timed_out)}
    if all(r.get("dsacks") not in (None, "") for r in flows):
        stats["spurious_timeout_flows"] = sum(int(r["dsacks"]) > 0
                                              for r in timed_out)
    return stats


def class_rows(exp, run, flows, **extra):
    rows = []
    for cls, lo, hi in CLASSES:
        sel = [r for r in flows if lo < int(r["size"]) <= hi]
        rows.append(base_row(exp, run, **extra, **{"class": cls},
                             **flow_stats(sel)))
    return rows


def micro_rows(runs):
    rows = []
    for run in runs:
        for cls, size in MICRO_CLASSES:
            fct = [int(r["fct_us"]) / 1000 for r in run.flows
                   if int(r["size"]) == size]
            rows.append(base_row("micro", run, **{
                "workload": "micro", "class": cls, "flows": len(fct),
                "mean_ms": mean(fct), "p99_ms": p99(fct)}))
    return rows


def shift_rows(runs):
    rows = []
    for run in runs:
        for i, (workload, _) in enumerate(run.meta["phases"]):
            flows = [r for r in run.flows if int(r["phase"]) == i]
            rows += class_rows("shift", run, flows, workload=workload,
                               phase=i, scheme=f"{run.meta['scheme']}-"
                               f"q{run.meta['queues']}")
    return rows


def pias_rows(runs):
    return [r for run in runs for r in class_rows("pias", run, run.flows)]


def hetero_rows(runs):
    rows = []
    for run in runs:
        rows += class_rows("hetero", run, run.flows, workload="mixed")
        for wl in ("websearch", "datamining"):
            rows += class_rows("hetero", run, [r for r in run.flows
                                               if r["workload"] == wl],
                               workload=wl)
    return rows


TARDY_SHORT = 100000         # The letter's S_L.


def tardy(flow):
    """Whether the flow's server sent some of its data again: retransmitted
    or sent a tail loss probe (runs before 'resent_bytes': retransmitted)."""
    return int(flow.get("resent_bytes") or flow["retransmits"]) > 0


def tardy_share(flows):
    """The fraction of the flows that lost a packet: the letter's w."""
    return (sum(tardy(r) for r in flows) / len(flows)
            if flows else float("nan"))


def tardy_rows(runs):
    """Per run, its short flows in two classes, tardy and normal, chosen by
    flow identity: the flows that lost a packet under AWAFS alone (scheme
    "off") at the same workload, load and seed are the tardy ones in every
    scheme, so that the classes compared are the same flows (TFS changes
    which flows lose one).  A run without that reference is classed by
    its own losses.  'tardy_share' is the reference's."""
    reference = {}
    for run in runs:
        if run.meta["scheme"] == "off":
            reference[tardy_point(run)] = run
    rows = []
    for run in runs:
        ref = reference.get(tardy_point(run), run)
        lost_ids = {r["id"] for r in ref.flows if tardy(r)}
        short = [r for r in run.flows if int(r["size"]) <= TARDY_SHORT]
        share = tardy_share(ref.flows)
        for cls, lost in (("short-tardy", True), ("short-normal", False)):
            sel = [r for r in short if (r["id"] in lost_ids) == lost]
            rows.append(base_row("tardy", run, **{"class": cls},
                                 **flow_stats(sel), tardy_share=share))
    return rows


def tardy_point(run):
    """(workload, load, seed) of a tardy run: its flows are the same in
    every scheme there."""
    return (run.meta["workload"], run.meta["load"], name_and_seed(run)[1])


def name_and_seed(run):
    """The run's name without its seed, and its seed (eval/run.py --seeds:
    seed 1 is the name alone, seed S the name with -seedS)."""
    m = SEED_SUFFIX.search(run.key)
    return (run.key[:m.start()], int(m.group(1))) if m else (run.key, 1)


def tardy_factors(rows):
    """The measured factor of improvement of the mean FCT of short tardy
    and normal flows (AWAFS alone over TFS or TFS+), beside the model's at
    the run's load and the loss AWAFS alone measured."""
    index = {(r["workload"], r["load"], r["scheme"], r["class"]): r
             for r in rows}
    out = markdown.head(["workload", "load %", "tardy flows (w)",
                         "TFS tardy: measured / model", "TFS normal",
                         "TFS+ tardy", "TFS+ normal"])
    for wl, load in sorted({(r["workload"], r["load"]) for r in rows}):
        off = index.get((wl, load, "off", "short-tardy"))
        if not off:
            continue
        w = off["tardy_share"]
        try:
            model = tfs_model.factors(
                load_cdf(workloads_dir() / f"{wl}.cdf"), load / 100, w,
                TARDY_SHORT) if tfs_model.stable(load / 100, w) else None
        except (OSError, ValueError, ZeroDivisionError):
            model = None
        cells = []
        for scheme in ("tfs", "tfs+"):
            for cls in ("tardy", "normal"):
                a = index.get((wl, load, "off", f"short-{cls}"))
                b = index.get((wl, load, scheme, f"short-{cls}"))
                got = (a["mean_ms"] / b["mean_ms"]
                       if a and b and b["mean_ms"] else float("nan"))
                exp = (f"{model[scheme, cls]:.2f}" if model
                       else "unstable")
                # No short flow of that class in a run: nothing measured.
                cells.append(f"{'–' if got != got else f'{got:.2f}'} / "
                             f"{exp}")
        out.append(markdown.row([wl, load, f"{w:.3f}", *cells]))
    return "\n".join(out)


def karuna_type(flow):
    """1 (deadline), 2 (known size) or 3, from the flow's server's spec."""
    spec = flow["karuna"]
    return 1 if spec.startswith("deadline") else 2 if spec == "size" else 3


def deadline_ms(flow):
    """The deadline the flow's server gave it."""
    return karuna_deadline_ms(karuna_spec(flow["karuna"]),
                              REQ.size + int(flow["size"]))


def missed(flow):
    """Whether the flow took longer than the deadline its server gave it."""
    return int(flow["fct_us"]) > 1000 * deadline_ms(flow)


def karuna_rows(runs):
    rows = []
    for run in runs:
        large = run.meta["workload"] == "longflow"
        for t in (1, 2, 3):
            flows = [r for r in run.flows if karuna_type(r) == t]
            classes = [(f"type{t}", flows),
                       (f"type{t}-small",
                        [r for r in flows if int(r["size"]) <= SHORT_MAX])]
            if large and t > 1:
                classes.append((f"type{t}-large", [
                    r for r in flows if int(r["size"]) > 5000000]))
            for cls, sel in classes:
                fct = [int(r["fct_us"]) / 1000 for r in sel]
                row = base_row("karuna", run, **{"class": cls},
                               **flow_stats(sel),
                               p95_ms=percentile(fct, 0.95))
                if t == 1:
                    row["miss_pct"] = (100 * sum(map(missed, sel)) / len(sel)
                                       if sel else float("nan"))
                rows.append(row)
    return rows


def karuna_changes(rows):
    """Karuna's mean and p95 FCT of types 2 and 3 against the two baselines,
    and the deadline-miss rates."""
    index = {(r["workload"], r["load"], r["scheme"], r["class"]): r
             for r in rows}
    out = markdown.head(["load %", "scheme", "deadline miss", "against",
                         "type 2 mean", "type 2 p95", "type 3 mean",
                         "type 3 p95"])
    for wl, load in sorted({(r["workload"], r["load"]) for r in rows
                            if r["workload"] != "longflow"}):
        for scheme in ("karuna-static", "karuna-adaptive", "karuna-mcp"):
            for base in ("dctcp-only", "deadline-on-top"):
                a1 = index.get((wl, load, scheme, "type1"))
                b1 = index.get((wl, load, base, "type1"))
                if not a1 or not b1:
                    continue
                cells = []
                for t in (2, 3):
                    a = index[(wl, load, scheme, f"type{t}")]
                    b = index[(wl, load, base, f"type{t}")]
                    cells += [f"{change(a['mean_ms'], b['mean_ms']):+.0f} %",
                              f"{change(a['p95_ms'], b['p95_ms']):+.0f} %"]
                out.append(markdown.row([
                    load, scheme, f"{a1['miss_pct']:.1f} %",
                    f"{base} ({b1['miss_pct']:.1f} %)", *cells]))
    return "\n".join(out)


def table(rows, cols, header):
    lines = markdown.head(header)
    for r in rows:
        if not r["flows"]:
            continue
        cells = []
        for c in cols:
            v = r.get(c, "")
            cells.append(f"{v:.2f}" if isinstance(v, float) else str(v))
        lines.append(markdown.row(cells))
    return "\n".join(lines)


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_micro(rows, path):
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    dctcp = [r for r in rows if r["transport"] == "dctcp"]
    for ax, (cls, stat, label) in zip(axes, [
            ("short", "mean_ms", "short flows, mean FCT (ms)"),
            ("short", "p99_ms", "short flows, p99 FCT (ms)"),
            ("long", "mean_ms", "long flows, mean FCT (ms)")]):
        for scheme in sorted({r["scheme"] for r in dctcp}):
            pts = sorted((r["load"], r[stat]) for r in dctcp
                         if r["scheme"] == scheme and r["class"] == cls)
            if len(pts) > 1:
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        marker="o", label=scheme)
        ax.set_xlabel("load (%)")
        ax.set_ylabel(label)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("Micro benchmark, DCTCP (thesis Figs. 5-3 to 5-6)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_convergence(runs, path):
    """The threshold over time of the adaptive micro runs at 80 % load
    (thesis Fig. 5-2), one line per starting threshold."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for run in runs:
        m = run.meta
        if m["transport"] == "dctcp" and m["load"] == 0.8 and \
                m["scheme"].startswith("awafs-pct10"):
            series = run.thresholds["p0"]
            start = m["scheme"].replace("awafs-pct10", "").lstrip("-") \
                or "from-1000KB"
            ax.step([t for t, _ in series], [v[0] / 1000 for _, v in series],
                    where="post", label=start)
    ax.axhline(10, color="gray", linestyle="--", label="10 kB")
    ax.set_yscale("log")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("threshold (kB)")
    ax.set_title("AWAFS threshold, micro benchmark at 80 % load")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# Flow-size buckets of the slowdown plot: (upper bound in bytes, label).
SIZE_BUCKETS = [(1_000, "< 1 kB"), (10_000, "1-10 kB"),
                (SHORT_MAX, "10-100 kB"), (1_000_000, "0.1-1 MB"),
                (10_000_000, "1-10 MB"), (float("inf"), "> 10 MB")]
# The pias experiment's schemes in the slowdown plot (the others make it
# unreadable): PIAS mismatched and matched, and AWAFS's two rules.
SLOWDOWN_SCHEMES = ("mismatched", "matched", "awafs-refpct", "awafs-auto")


def size_bucket(size):
    """The index of the SIZE_BUCKETS bucket a flow of 'size' bytes is in."""
    return next(i for i, (top, _) in enumerate(SIZE_BUCKETS) if size <= top)


def fcts_by_size(flows):
    """[the FCTs (ms) of the flows in each SIZE_BUCKETS bucket]."""
    out = [[] for _ in SIZE_BUCKETS]
    for r in flows:
        out[size_bucket(int(r["size"]))].append(int(r["fct_us"]) / 1000)
    return out


def slowdown_by_size(flows):
    """[mean slowdown of the flows in each SIZE_BUCKETS bucket, or None]."""
    sums = [[0.0, 0] for _ in SIZE_BUCKETS]
    for r in flows:
        i = size_bucket(int(r["size"]))
        sums[i][0] += float(r["slowdown"])
        sums[i][1] += 1
    return [total / n if n else None for total, n in sums]


def plot_slowdown(runs, path):
    """Mean slowdown (FCT over the ideal at the port's rate and the base
    RTT) per flow-size bucket of the pias runs, every seed pooled: a panel
    per workload and load, a line per scheme of SLOWDOWN_SCHEMES.  False
    if there is nothing to plot."""
    flows = {}
    for run in runs:
        m = run.meta
        if m.get("per_flow"):
            continue
        scheme = {MISMATCHED[m["workload"]]: "mismatched",
                  f"pias-{m['workload']}": "matched"}.get(m["scheme"],
                                                          m["scheme"])
        if scheme in SLOWDOWN_SCHEMES:
            flows.setdefault((m["workload"], m["load"]), {}) \
                 .setdefault(scheme, []).extend(run.flows)
    if not flows:
        return False
    plt = pyplot()
    workloads = sorted({w for w, _ in flows})
    loads = sorted({load for _, load in flows})
    fig, axes = plt.subplots(len(loads), len(workloads),
                             figsize=(3.2 * len(workloads),
                                      0.6 + 3.2 * len(loads)),
                             squeeze=False, sharey=True)
    labels = [label for _, label in SIZE_BUCKETS]
    for (workload, load), ax in ((p, axes[loads.index(p[1])]
                                  [workloads.index(p[0])]) for p in flows):
        for scheme in SLOWDOWN_SCHEMES:
            if scheme in flows[workload, load]:
                means = slowdown_by_size(flows[workload, load][scheme])
                ax.plot([i for i, v in enumerate(means) if v is not None],
                        [v for v in means if v is not None], marker="o",
                        label=scheme)
        ax.set_title(f"{workload}, {load * 100:.0f} %", fontsize=9)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=60, fontsize=7)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("mean slowdown")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Mean slowdown by flow size")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def plot_shift(runs, path):
    """Thresholds over time for 2, 3 and 4 queues (thesis Figs. 5-10 to
    5-12), with the time of the shift."""
    adaptive = sorted((r for r in runs if r.meta["scheme"] == "awafs"
                       and r.meta.get("seed", 1) == 1),
                      key=lambda r: r.meta["queues"])
    if not adaptive:
        return False
    plt = pyplot()
    fig, axes = plt.subplots(1, len(adaptive), figsize=(5 * len(adaptive),
                                                        4), squeeze=False)
    for ax, run in zip(axes[0], adaptive):
        series = run.thresholds["p0"]
        for i in range(run.meta["queues"] - 1):
            ax.step([t for t, _ in series], [v[i] / 1000 for _, v in series],
                    where="post", label=f"Thr{i}")
        second = [float(r["start_s"]) for r in run.flows
                  if int(r["phase"]) == 1]
        if second:
            # start_s counts from the first arrival, after the client's
            # start; the sampled clock starts with the client.
            ax.axvline(min(second) + series[0][0], color="gray",
                       linestyle="--", label="web search starts")
        ax.set_yscale("log")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("threshold (kB)")
        ax.set_title(f"{run.meta['queues']} queues")
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("Data mining, then web search: AWAFS thresholds")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def follow_s(series, shift_s):
    """Seconds from 'shift_s' to the first of the thresholds 'series'
    ([(t, [bytes, ...])], t on the same clock) within a factor of 2 of the
    last ones, each of them; None if none is."""
    final = series[-1][1]
    for t, thr in series:
        if t >= shift_s and all(f / 2 <= v <= 2 * f
                                for v, f in zip(thr, final)):
            return t - shift_s
    return None


def follow_cells(times, digits):
    """Of the follow_s() 'times' of a scheme's runs: how many runs, how
    many followed, their median and range in seconds ('digits' decimals)."""
    done = sorted(t for t in times if t is not None)
    if not done:
        return [len(times), 0, "-", "-"]
    return [len(times), len(done), f"{statistics.median(done):.{digits}f}",
            f"{done[0]:.{digits}f}-{done[-1]:.{digits}f}"]


def follow_table(runs):
    """How soon each learning scheme of the shift followed web search, over
    the runs (seeds) kept: from the first web-search flow to the first
    thresholds near those the run ended with (follow_s())."""
    times = {}
    for run in runs:
        series = run.thresholds.get("p0")
        second = [float(r["start_s"]) for r in run.flows
                  if int(r["phase"]) == 1]
        if run.meta["scheme"].startswith("awafs") and series and second:
            # start_s counts from the first arrival; the sampled clock
            # starts with the client (plot_shift()).
            key = f"{run.meta['scheme']}-q{run.meta['queues']}"
            times.setdefault(key, []).append(
                follow_s(series, min(second) + series[0][0]))
    lines = markdown.head(["scheme", "runs", "followed", "median (s)",
                           "range (s)"])
    for key, ts in sorted(times.items()):
        lines.append(markdown.row([key, *follow_cells(ts, 1)]))
    return "\n".join(lines)


def final_thresholds(runs):
    """The last sampled thresholds of each port of the AWAFS hetero runs."""
    lines = markdown.head(["run", "port", "thresholds at the end (bytes)"])
    for run in runs:
        if run.meta["scheme"].startswith("awafs"):
            for port, series in sorted(run.thresholds.items()):
                lines.append(markdown.row([
                    run.key, port, ", ".join(map(str, series[-1][1]))]))
    return "\n".join(lines)


def change(ours, theirs):
    """Relative change in %: negative is shorter (better)."""
    return (ours / theirs - 1) * 100 if theirs else float("nan")


def comparison(rows, pairs, keys, classes):
    """For each (scheme, baseline) of 'pairs' -- or a function of a row
    giving them -- the change of each class's mean and p99 FCT, per
    'keys' (e.g. workload and load)."""
    index = {tuple(r[k] for k in keys + ["scheme", "class"]): r
             for r in rows}
    out = markdown.head([*keys, "AWAFS", "against",
                         *(f"{c} {stat}" for c in classes
                           for stat in ("mean", "p99")), "timeouts"])
    for key in sorted({tuple(r[k] for k in keys) for r in rows}):
        for scheme, base in pairs(dict(zip(keys, key))):
            cells = []
            for c in classes:
                a = index.get(key + (scheme, c))
                b = index.get(key + (base, c))
                if not a or not b:
                    break
                cells += [f"{change(a['mean_ms'], b['mean_ms']):+.0f} %",
                          f"{change(a['p99_ms'], b['p99_ms']):+.0f} %"]
            else:
                a = index[key + (scheme, classes[-1])]
                b = index[key + (base, classes[-1])]
                timeouts = (f"{a['timeout_flows']} vs {b['timeout_flows']}"
                            if "timeout_flows" in a else "–")
                out.append(markdown.row([*key, scheme, base, *cells,
                                         timeouts]))
    return "\n".join(out)


def lateness(runs):
    """How late each experiment's generator wrote its requests against the
    Poisson schedule (late_us of every flow): its own overhead."""
    lines = markdown.head(["experiment", "flows", "mean (ms)", "p99 (ms)",
                           "max (ms)"])
    for exp, rs in runs.items():
        late = [int(r["late_us"]) / 1000 for run in rs for r in run.flows
                if r.get("late_us") not in (None, "")]
        if late:
            lines.append(markdown.row([exp, len(late), f"{mean(late):.3f}",
                                       f"{p99(late):.3f}",
                                       f"{max(late):.3f}"]))
    return "\n".join(lines)


CLASS_COLS = ["class", "scheme", "flows", "mean_ms", "p99_ms", "slowdown",
              "timeout_flows", "spurious_timeout_flows", "dropped",
              "ecn_marks"]
CLASS_HEAD = ["class", "scheme", "flows", "mean", "p99", "mean slowdown",
              "flows with a timeout", "of them spurious (a DSACK)",
              "drops", "CE"]


def workload_table(rows):
    """The class rows of 'rows', per workload and load."""
    return table(sorted(rows, key=lambda r: (r["workload"], r["load"],
                                             r["class"], r["scheme"])),
                 ["workload", "load"] + CLASS_COLS,
                 ["workload", "load %"] + CLASS_HEAD)


def micro_section(micro, runs, out):
    plot_micro(micro, out / "micro.png")
    plot_convergence(runs, out / "micro-threshold.png")
    return ["## Micro benchmark (§5.3)", "", "![micro](micro.png)", "",
            "![threshold](micro-threshold.png)", "",
            table(sorted(micro, key=lambda r: (
                r["transport"], r["class"], r["load"], r["scheme"])),
                ["transport", "load", "class", "scheme", "flows",
                 "mean_ms", "p99_ms", "dropped", "ecn_marks"],
                ["transport", "load %", "class", "scheme", "flows",
                 "mean", "p99", "drops", "CE"]), "",
            "AWAFS against the static thresholds (change of FCT):", "",
            comparison(micro, lambda k: [
                (a, b) for a in ("awafs-pct10", "awafs-pct10-from-1KB",
                                 "awafs-pct70", "awafs-auto")
                for b in ("static-1000KB", "static-10KB", "fifo")],
                ["transport", "load"], ["short", "long"]), ""]


def shift_section(shift, runs, out):
    md = ["## Workload shift: data mining, then web search (§5.4)", ""]
    if plot_shift(runs, out / "shift.png"):
        md += ["![shift](shift.png)", ""]
    return md + [
        table(sorted(shift, key=lambda r: (r["phase"], r["class"],
                                           r["scheme"])),
              ["workload"] + CLASS_COLS, ["phase"] + CLASS_HEAD), "",
        "AWAFS against the static thresholds, per phase:", "",
        comparison(shift, lambda k: [
            (f"awafs-q{q}", f"static-q{q}") for q in (2, 3, 4)]
            + [("awafs-auto-q4", "static-q4"), ("awafs-auto-q4", "awafs-q4")],
            ["workload"], ["small", "all"]), "",
        "How soon the thresholds followed web search: from its first flow "
        "to the first thresholds within a factor of 2 of those each run "
        "ended with:", "", follow_table(runs), ""]


def pias_section(pias, runs, out):
    plot = (["![slowdown by flow size](pias-slowdown.png)", ""]
            if plot_slowdown(runs, out / "pias-slowdown.png") else [])
    return ["## AWAFS and PIAS with matched and mismatched thresholds "
            "(§5.5)", "", *plot,
            workload_table(pias), "",
            "AWAFS against PIAS with the thesis's mismatched thresholds "
            "(and against the matched ones):", "",
            comparison(pias, lambda k: [
                (a, b) for a in ("awafs-refpct", "awafs-pias-positions",
                                 "awafs-auto")
                for b in (MISMATCHED[k["workload"]],
                          f"pias-{k['workload']}")],
                ["workload", "load"], ["small", "all"]), ""]


def hetero_section(hetero, runs, out):
    return ["## Heterogeneous traffic on a leaf-spine fabric (§5.6)", "",
            table(sorted(hetero, key=lambda r: (r["load"], r["workload"],
                                                r["class"], r["scheme"])),
                  ["load", "workload"] + CLASS_COLS,
                  ["load %", "pair workload"] + CLASS_HEAD), "",
            "AWAFS against PIAS's web-search thresholds on every port:",
            "", comparison(hetero, lambda k: [(a, "pias-websearch")
                                              for a in ("awafs-refpct",
                                                        "awafs-auto")],
                           ["load", "workload"], ["small", "all"]), "",
            final_thresholds(runs), ""]


def tardy_section(tardy, runs, out):
    return ["## Tardy flows: TFS and TFS+ against AWAFS alone (seed 004)",
            "", "Short flows (<= 100 kB) that lost a packet (tardy) and "
            "the others; cubic without ECN, a shallow buffer.", "",
            workload_table(tardy), "",
            "Factor of improvement of the mean FCT (AWAFS alone over TFS "
            "or TFS+): measured / the letter's model (sim/tfs_model.py) at "
            "the run's load and the share of flows that lost a packet "
            "with AWAFS alone:", "", tardy_factors(tardy), ""]


def karuna_section(karuna, runs, out):
    return ["## Karuna's mix-flows (seed 003)", "",
            "A third of the flows of each type (1: deadline, 2: known "
            "size, 3: unknown size); DCTCP for all of them, but for "
            "karuna-mcp (MCP: deadline flows paced to their deadline).",
            "",
            table(sorted(karuna, key=lambda r: (r["workload"], r["load"],
                                                r["class"], r["scheme"])),
                  ["workload", "load", "class", "scheme", "flows",
                   "miss_pct", "mean_ms", "p95_ms", "p99_ms",
                   "timeout_flows", "dropped", "ecn_marks"],
                  ["workload", "load %", "class", "scheme", "flows",
                   "deadline miss %", "mean", "p95", "p99",
                   "flows with a timeout", "drops", "CE"]), "",
            "Karuna against the baselines (change of FCT; negative is "
            "shorter):", "", karuna_changes(karuna), ""]


def preamble(out):
    return ["# Evaluation report", "",
            "Regenerated by `python3 -m eval.report` from the runs under "
            f"`{out}/runs/` (`make eval`).  Times in ms; `drops` and `CE` "
            "are the awafs ports' dropped and CE-marked packets over the "
            "run.", ""]



def seed_groups(runs):
    """{(experiment, run name): {seed: Run}} of the runs kept with more than
    one seed (eval/run.py --seeds: seed 1 is the name alone, seed S the name
    with -seedS)."""
    groups = {}
    for exp, rs in runs.items():
        for run in rs:
            name, seed = name_and_seed(run)
            groups.setdefault((exp, name), {})[seed] = run
    return {k: v for k, v in groups.items() if len(v) > 1}


def best_static(groups, short):
    """{(workload, load): (experiment, run name)} of the run with fixed
    thresholds (PIAS's or the sweep's) and the lowest short mean at each
    point of the pias experiment, among those in 'groups' with the most
    seeds; 'short' holds each one's short FCTs by seed."""
    from eval.static_sweep import pooled

    best = {}
    for key, by_seed in groups.items():
        meta = next(iter(by_seed.values())).meta
        if (key[0] != "pias" or not short[key] or meta.get("per_flow")
                or meta.get("qos", {}).get("mode") != "static"):
            continue
        point = (meta["workload"], meta["load"])
        rank = (-len(short[key]), statistics.mean(pooled(short[key])))
        if point not in best or rank < best[point][0]:
            best[point] = (rank, key)
    return {point: key for point, (_, key) in best.items()}


def carried_load(run):
    """What the run's busiest awafs port carried, as a share of its
    max-rate (senderbed.carried_bps(): frames and their wire overhead over
    the run); None if the run did not record it."""
    shares = [carried_bps(p) / int(p["details"]["max-rate"])
              for p in run.meta.get("ports", {}).values()
              if p.get("seconds") and "max-rate" in p.get("details", {})]
    return max(shares) if shares else None


def seeds_short_table(groups):
    """Per run kept with several seeds: its short flows' quantiles and the
    mean of each size bucket up to SHORT_MAX (SIZE_BUCKETS), pooled."""
    buckets = [label for top, label in SIZE_BUCKETS if top <= SHORT_MAX]
    lines = ["Their short flows in more detail: quantiles of the FCT (ms), "
             "and the mean FCT (ms) by size:", "",
             *markdown.head(["experiment", "run", "p50", "p75", "p90",
                             *(f"mean, {b}" for b in buckets)])]
    for (exp, name), by_seed in sorted(groups.items()):
        flows = [r for run in by_seed.values() for r in run.flows
                 if int(r["size"]) <= SHORT_MAX]
        if not flows:
            continue
        fcts = [int(r["fct_us"]) / 1000 for r in flows]
        by_size = fcts_by_size(flows)[:len(buckets)]
        means = [f"{mean(v):.2f}" if v else "-" for v in by_size]
        lines.append(markdown.row([
            exp, name, *(f"{percentile(fcts, q):.2f}"
                         for q in (0.5, 0.75, 0.9)), *means]))
    return lines


def seeds_all_table(groups, best):
    """Per run of the pias experiment kept with several seeds: the mean FCT
    of all its flows, pooled, against that of the best static thresholds
    on short flows at its point (best_static()), and the mean of each size
    bucket above SHORT_MAX: what a scheme gives the flows the short-flow
    mean leaves out (percentiles=auto minimises the model's mean over all
    flows)."""
    from eval.static_sweep import interval_rng, ratio_ci

    buckets = [label for top, label in SIZE_BUCKETS if top > SHORT_MAX]
    lines = ["Every flow of the pias experiment's runs: the mean FCT (ms) of "
             "all of them, pooled, its change against the best static "
             "thresholds above (the lowest short mean) with a 95 % bootstrap "
             "interval, and the mean FCT (ms) by size above 100 kB:", "",
             *markdown.head(["run", "flows", "mean, all",
                             "against the best static", *(f"mean, {b}"
                                                          for b in buckets)])]
    every = {key: {seed: [int(r["fct_us"]) / 1000 for r in run.flows]
                   for seed, run in by_seed.items() if run.flows}
             for key, by_seed in groups.items() if key[0] == "pias"}
    for (exp, name), mine in sorted(every.items()):
        if not mine:
            continue
        meta = next(iter(groups[exp, name].values())).meta
        top = best.get((meta.get("workload"), meta.get("load")))
        against = "-"
        if top == (exp, name):
            against = "(the best static)"
        elif top in every:
            pct, (lo, hi) = ratio_ci(mine, every[top],
                                     interval_rng("all", exp, name, *top))
            against = f"{pct:+.1f} % [{lo:+.1f}, {hi:+.1f}]"
        fcts = [v for g in mine.values() for v in g]
        by_size = fcts_by_size([r for run in groups[exp, name].values()
                                for r in run.flows])[-len(buckets):]
        lines.append(markdown.row([
            name, len(fcts), f"{mean(fcts):.2f}", against,
            *(f"{mean(v):.1f}" if v else "-" for v in by_size)]))
    return lines


def seeds_section(runs):
    """Per run kept with several seeds: its short flows (at most 100 kB)
    pooled over the seeds, their mean with a 95 % bootstrap interval
    (eval/static_sweep.py mean_ci(): resampled within each seed), p99 where
    enough are pooled, else the maximum; the flows with a timeout (and of
    them the spurious ones, where logged) and the port's drops, summed."""
    from eval.static_sweep import (P99_MIN_FLOWS, interval_rng, mean_ci,
                                   pooled, ratio_ci, tail)

    groups = seed_groups(runs)
    if not groups:
        return []
    short = {key: {} for key in groups}
    settled = {key: {} for key in groups}
    for key, by_seed in groups.items():
        for seed, run in by_seed.items():
            flows = [r for r in run.flows if int(r["size"]) <= SHORT_MAX]
            if flows:
                short[key][seed] = [int(r["fct_us"]) / 1000 for r in flows]
                settled[key][seed] = [int(r["fct_us"]) / 1000 for r in flows
                                      if float(r["start_s"]) >= SETTLED_S]
    best = best_static(groups, short)
    lines = markdown.head(["experiment", "run", "seeds", "short flows",
                           "short mean (ms)", "95 % CI",
                           "short p99 (ms)", "against PIAS mismatched",
                           "against the best static",
                           f"the same, flows from {SETTLED_S} s",
                           "flows with a timeout", "of them spurious",
                           "drops", "carried load"])
    for (exp, name), by_seed in sorted(groups.items()):
        mine = short[exp, name]
        if not mine:
            continue
        mean, (lo, hi) = mean_ci(mine, interval_rng("short", exp, name))
        meta = next(iter(by_seed.values())).meta
        base = None
        if exp == "pias" and meta.get("workload") in MISMATCHED:
            base = (exp, f"{meta['workload']}-load"
                    f"{round(meta['load'] * 100)}-"
                    f"{MISMATCHED[meta['workload']]}")
        elif exp == "hetero":
            # The thesis's §5.6 reference: web search's thresholds.
            base = (exp, f"load{round(meta['load'] * 100)}-pias-websearch")
        against = "-"
        if base == (exp, name):
            against = "(the reference)"
        elif short.get(base):
            pct, (plo, phi) = ratio_ci(mine, short[base],
                                       interval_rng("short", exp, name,
                                                    *base))
            against = f"{pct:+.1f} % [{plo:+.1f}, {phi:+.1f}]"
        versus_best = versus_best_settled = "-"
        top = best.get((meta.get("workload"), meta.get("load")))
        if top == (exp, name):
            versus_best = versus_best_settled = "(the best static)"
        elif top and exp == "pias":
            pct, (plo, phi) = ratio_ci(mine, short[top],
                                       interval_rng("short", exp, name,
                                                    *top))
            versus_best = f"{pct:+.1f} % [{plo:+.1f}, {phi:+.1f}]"
            if pooled(settled[exp, name]) and pooled(settled[top]):
                pct, (plo, phi) = ratio_ci(settled[exp, name], settled[top],
                                           interval_rng("settled", exp, name,
                                                        *top))
                versus_best_settled = (f"{pct:+.1f} % [{plo:+.1f}, "
                                       f"{phi:+.1f}]")
        stats = flow_stats([r for run in by_seed.values() for r in run.flows])
        carried = [carried_load(run) for run in by_seed.values()]
        lines.append(markdown.row([
            exp, name, len(by_seed), len(pooled(mine)), f"{mean:.3f}",
            f"{lo:.3f}-{hi:.3f}", tail(pooled(mine)), against, versus_best,
            versus_best_settled, stats["timeout_flows"],
            stats.get("spurious_timeout_flows", "-"),
            sum(run.port_totals()["dropped"] for run in by_seed.values()),
            "-" if None in carried
            else f"{100 * statistics.mean(carried):.0f} %"]))
    return ["## Seeds pooled", "",
            "Runs kept with several seeds (`eval/run.py --seeds N`): short "
            "flows (at most 100 kB) pooled over the seeds; the interval is a "
            "95 % bootstrap of their mean, resampled within each seed (each "
            "interval from a random stream of its own, named by its run and "
            "what it is compared with: a run added to a folder moves no "
            "other run's interval); p99 "
            f"where at least {P99_MIN_FLOWS} are pooled, else their max; "
            "in the pias experiment the change of the short mean against "
            "PIAS with the thesis's mismatched thresholds at that workload "
            "and load (in hetero, against PIAS's web-search thresholds at "
            "that load), and against the best static thresholds in hindsight "
            "there (of the static schemes run with these seeds, PIAS's and "
            "the sweep's, the one with the lowest short mean), each with "
            "its 95 % bootstrap interval; and that change for the flows "
            f"that started {SETTLED_S} s or more into the run, when the "
            "learning schemes have left the initial thresholds (their "
            "first set needs min-samples completions and a round); the "
            "load carried, as against the load offered that names the "
            "run: what its busiest port sent (frames and their wire "
            "overhead) over the run, as a share of its rate, the mean of "
            "the seeds.", "",
            *lines, "", *seeds_short_table(groups), "",
            *seeds_all_table(groups, best), ""]


def karuna_pooled_section(runs):
    """Karuna's runs kept with several seeds, pooled at each workload and
    load as sim/ns3_karuna.py pools its own (eval/karuna_pool.py)."""
    from eval.karuna_pool import DEADLINE, caption, classes, tables

    def pool_row(flow):
        """The flow as eval/karuna_pool.py's classes() reads it."""
        t = karuna_type(flow)
        return {"start_s": float(flow["start_s"]), "type": t,
                "size": int(flow["size"]),
                "fct_ms": int(flow["fct_us"]) / 1000,
                "deadline_ms": deadline_ms(flow) if t == DEADLINE else 0}

    points = {}
    for run in runs.get("karuna", []):
        _, seed = name_and_seed(run)
        m = run.meta
        rows = [pool_row(r) for r in run.flows]
        points.setdefault((m["workload"], round(m["load"] * 100)), {}) \
              .setdefault(m["scheme"], {})[seed] = classes(rows, 0)
    lines = []
    for (wl, load), kept in sorted(points.items()):
        if max(len(by_seed) for by_seed in kept.values()) < 2:
            continue
        lines += [f"{wl} at {load} %:", "", *tables(kept), ""]
    if not lines:
        return []
    return ["## Karuna pooled over seeds", "", caption(0), "", *lines]


def overhead_section(runs):
    return ["## The generators' own overhead", "",
            "How late the load generators (testbed/httpload.py, "
            "testbed/flowgen.py) sent each request against its schedule.",
            "", lateness(runs), ""]


def write_summary(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, restval="")
        w.writeheader()
        for exp_rows in rows.values():
            w.writerows(exp_rows)


def main(argv):
    # The registry names this module's rows and sections: imported here,
    # not above, so that it can import this module.
    from eval.experiments import EXPERIMENTS

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "build" / "eval"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    runs = {name: load_runs(out, name) for name in EXPERIMENTS}
    rows = {name: exp.rows(runs[name]) for name, exp in EXPERIMENTS.items()}
    write_summary(out / "summary.csv", rows)
    md = preamble(out)
    for name, exp in EXPERIMENTS.items():
        if rows[name]:
            md += exp.section(rows[name], runs[name], out)
    md += seeds_section(runs)
    md += karuna_pooled_section(runs)
    md += overhead_section(runs)
    (out / "report.md").write_text("\n".join(md))
    print(f"report: {out / 'report.md'}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])

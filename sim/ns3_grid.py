"""The thesis's large-scale experiments on ns-3 (§5.5): AWAFS against PIAS
and FIFO on the leaf-spine (build/bin/awafs-ns3 --topology leaf-spine: 9
leaves x 16 hosts at 10 Gbit/s, 4 spines at 40 Gbit/s, all-to-all, DCTCP
with K 65, 8 queues on every switch port), one run per point (workload,
load, scheme, seed), resumable: each finished run's flows are kept in
OUT as WORKLOAD-loadPCT-SCHEME-seedN.csv.gz with its summary line beside
it (.txt), and a run whose files exist is not run again; --jobs runs
several at a time (one core each).  OUT/flows.sha256
holds every kept run's checksum: a folder kept without its flows is still
checked run by run with --verify, which runs them again elsewhere.

    python -m sim.ns3_grid --out build/eval-sim-grid --jobs 2
                                                        (make eval-sim-grid)

The headline points come first: awafs, pias and fifo at 50 % and 80 % on
all four workloads, every seed; then srpt (the ideal lower bound) and auto.
The schemes, as eval/run.py configures the testbed's (§5.5):

- pias: PIAS-NS2's 7 thresholds of the mismatched workload at the load
  (eval/report.py MISMATCHED, as the thesis: web search runs with data
  mining's, data mining with web search's, Hadoop and cache with data
  mining's), fixed;
- awafs: RefPct 10, 20, ..., 70 starting from those same thresholds;
- auto: the FCT model's thresholds, from the same start; auto-slowdown
  those that minimise its mean slowdown instead (--objective slowdown),
  auto-short the mean FCT of its flows up to 100 kB (--objective short),
  auto-pias PIAS's objective, which weighs only the fractions of flows
  that end in each queue (--objective pias);
  auto-settled: the thresholds auto settles on for a window of the
  workload alone at the point's load (awafs-sim --auto), fixed from the
  start: the model's choice without the learning;
- fifo: one queue in effect; srpt: pFabric's order with the sizes known;
- pias-matched: PIAS's thresholds of the workload itself at the load
  (eval/run.py pias_matched(): PIAS-NS2's for web search and data mining,
  its objective's for Hadoop and cache);
- static-refpct, static-refpct-xF: fixed at the workload CDF's 10th, 20th,
  ..., 70th percentiles (what awafs learns from a window of the workload),
  times F: with a few values of F, the sweep whose best point is the best
  static thresholds in hindsight that issue 33 measures against.

Besides the four workloads, two mixes (--workloads shift,hetero; MIXES):
the shift (§5.4: the first half of the flows data mining, the second web
search, at the same load) and hetero (§5.6: web search between hosts
i < j, data mining otherwise), each run with PIAS's thresholds of the
workload in MIXES (data mining's and web search's: the testbed's) and
awafs and auto from them; the summary has a row per workload of a mix, and
for the shift how soon the learning schemes' thresholds followed it
(follow_section(), from each run's threshold trace).  Every run of a
learning scheme keeps the trace of its thresholds at leaf 0's port toward
host 0 as NAME.trace.csv.gz (runs kept before 2026-12-01 have none);
with --waits (or later, sim/ns3_waits.py) it keeps where its packets
waited as NAME.waits.csv.gz.

The summary (OUT/summary.md, also printed) gives per point the mean FCT of
the short flows (at most 100 kB, as the thesis counts them) pooled over
the seeds with a 95 % bootstrap interval, their p99 where at least
1000 short flows are pooled (else their max), median and p90, how many
took over 10 ms (a timer's wait, not a queue's), and the long flows'
mean; then the short mean by size, and split into the flows of at most
10 ms and what those over 10 ms add; and, by size, how many thresholds
lie below the flows (demotion_section(): from a learning scheme's trace,
so only for runs that kept one, and not for hetero, whose traced port
carries one workload only)."""

import argparse
import bisect
import functools
import gzip
import hashlib
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from eval.report import MISMATCHED, SHORT_MAX, follow_cells, follow_s
from eval.run import (REFPCT8, csvlist, pias_matched, pias_thresholds,
                      static_refpct)
from eval.static_sweep import (P99_MIN_FLOWS, interval_rng, mean_ci, pooled,
                               ratio_ci, tail)
from sim.ns3_eval import NS3, read_flows, read_trace, run_ns3
from testbed import markdown
from testbed.micro import percentile
from testbed.sim import run_sim
from testbed.workload import workloads_dir

WORKLOADS = ["websearch", "datamining", "hadoop", "cache"]
LOADS = [0.5, 0.8]
HEADLINE = ["awafs", "pias", "fifo"]
MORE = ["srpt", "auto"]
# The schemes whose thresholds learn.
ADAPTIVE = ["awafs", "auto", "auto-slowdown", "auto-short", "auto-pias"]
STATIC = re.compile(r"static-refpct(?:-x(\d+(?:\.\d+)?))?$")
# The short flows' size classes of the summary's by-size table: (up to
# and including, heading).
SIZE_CLASSES = [(1000, "up to 1 kB"), (10000, "1-10 kB"),
                (30000, "10-30 kB"), (SHORT_MAX, "30-100 kB")]
STALL_MS = 10       # A short flow this slow waited for a timer, not a queue.
CHECKSUMS = "flows.sha256"
# Two workloads in one run: (the first, awafs-ns3's option for the second,
# the second, the workload whose PIAS thresholds pias runs).
MIXES = {
    # §5.4: data mining, then web search; thresholds right for the first.
    "shift": ("datamining", "--then-workload", "websearch", "datamining"),
    # §5.6: web search between hosts i < j, data mining otherwise; PIAS's
    # web-search thresholds on every port, as eval/run.py's hetero.
    "hetero": ("websearch", "--pair-workload", "datamining", "websearch"),
}


def points(workloads, loads, schemes, seeds):
    """(workload, load, scheme, seed) in the order they run: the headline
    schemes first, then the others; within each, point by point (every
    seed of one point before the next)."""
    tiers = [[s for s in schemes if s in HEADLINE],
             [s for s in schemes if s not in HEADLINE]]
    return [(w, load, s, seed) for tier in tiers if tier
            for load in loads for w in workloads
            for seed in seeds for s in tier]


def is_static(scheme):
    """Whether 'scheme' is one of the best static thresholds' candidates:
    the sweep's, PIAS's matched to the workload, or auto's settled set."""
    return (scheme in ("pias-matched", "auto-settled")
            or bool(STATIC.match(scheme)))


def known(scheme):
    return (scheme in HEADLINE + MORE
            + ["auto-slowdown", "auto-short", "auto-pias"]
            or is_static(scheme))


def parts(workload):
    """The workloads of a point's flows by their part (awafs-ns3's flows
    CSV): [None] for one workload, [0, 1] for a mix."""
    return [0, 1] if workload in MIXES else [None]


def part_name(workload, part):
    """'websearch', or 'shift: datamining' for part 0 of the shift."""
    if part is None:
        return workload
    return f"{workload}: {MIXES[workload][2 * part]}"


def workload_args(workload):
    """awafs-ns3's options for 'workload' or a mix's two."""
    if workload not in MIXES:
        return ["--workload", workloads_dir() / f"{workload}.cdf"]
    first, option, second, _ = MIXES[workload]
    return ["--workload", workloads_dir() / f"{first}.cdf",
            option, workloads_dir() / f"{second}.cdf"]


def pias(workload, load):
    """PIAS-NS2's thresholds of 'workload' at 'load', as an option."""
    thr, _ = pias_thresholds(workload, load)
    if not thr:
        sys.exit(f"ns3_grid: no PIAS thresholds of {workload} at load "
                 f"{load:g} in {workloads_dir()}")
    return ",".join(map(str, thr))


def auto_settled(workload, load):
    """The 7 thresholds that auto keeps for a window of 'workload' alone at
    port load 'load': awafs-sim's after 2 s of 20,000 completions a second
    (a full 1 s histogram window, as the switch's), its last set."""
    return run_sim("--workload", workloads_dir() / f"{workload}.cdf",
                   "--queues", 8, "--window-type", "histogram",
                   "--window-ms", 1000, "--rate", 20000, "--duration-ms",
                   2000, "--auto", load)[-1]["thr"]


def scheme_args(scheme, workload, load):
    """awafs-ns3's options for 'scheme' on 'workload' at 'load'."""
    static = STATIC.match(scheme)
    if static:
        thr = static_refpct(workload, float(static.group(1) or 1))
        return ["--scheme", "pias", "--thresholds", csvlist(thr)]
    if scheme == "pias-matched":
        return ["--scheme", "pias", "--thresholds",
                csvlist(pias_matched(workload, load))]
    if scheme == "auto-settled":
        return ["--scheme", "pias", "--thresholds",
                csvlist(auto_settled(workload, load))]
    # A mix's pias runs its MIXES workload's thresholds, a workload's the
    # mismatched ones; awafs and auto start from them.
    thr = pias(MIXES[workload][3] if workload in MIXES
               else MISMATCHED[workload].removeprefix("pias-"), load)
    return {"fifo": ["--scheme", "fifo"],
            "pias": ["--scheme", "pias", "--thresholds", thr],
            "awafs": ["--scheme", "awafs", "--thresholds", thr,
                      "--percentiles", REFPCT8],
            "auto": ["--scheme", "auto", "--thresholds", thr],
            "auto-slowdown": ["--scheme", "auto", "--thresholds", thr,
                              "--objective", "slowdown"],
            "auto-short": ["--scheme", "auto", "--thresholds", thr,
                           "--objective", "short"],
            "auto-pias": ["--scheme", "auto", "--thresholds", thr,
                          "--objective", "pias"],
            "srpt": ["--scheme", "srpt"]}[scheme]


def tag(workload, load, scheme, seed):
    return f"{workload}-load{round(load * 100)}-{scheme}-seed{seed}"


def run_point(out, common, point, waits=False):
    """Runs one point unless its files exist; True if it ran.  With
    'waits', keeps where its packets waited too (NAME.waits.csv.gz)."""
    workload, load, scheme, seed = point
    name = tag(*point)
    csv_gz, txt = out / f"{name}.csv.gz", out / f"{name}.txt"
    if csv_gz.exists() and txt.exists():
        return False
    tmp = out / f"{name}.csv.tmp"
    # The learning schemes keep their thresholds' trace too.
    trace = out / f"{name}.trace.tmp" if scheme in ADAPTIVE else None
    waits_tmp = out / f"{name}.waits.tmp"
    s = run_ns3(*common, *workload_args(workload),
                "--load", load, "--seed", seed,
                *scheme_args(scheme, workload, load),
                *(["--waits-csv", waits_tmp] if waits else []),
                flows_csv=tmp, trace_csv=trace, check=False, timeout=None)
    # A run whose flows did not all complete is kept too: the summary says
    # so, and running it again would give the same.
    if trace:
        gzip_to(trace, out / f"{name}.trace.csv.gz")
    if waits:
        gzip_to(waits_tmp, out / f"{name}.waits.csv.gz")
    keep_run(out, name, s, tmp)
    return True


def run_kept(out, name, args):
    """Runs awafs-ns3 with 'args' and keeps the run as NAME in 'out'
    (keep_run()) unless its files exist; True if it ran.  For the drivers
    whose runs keep only their flows (sim/ns3_tfs.py, sim/ns3_karuna.py)."""
    if (out / f"{name}.csv.gz").exists() and (out / f"{name}.txt").exists():
        return False
    tmp = out / f"{name}.csv.tmp"
    keep_run(out, name, run_ns3(*args, flows_csv=tmp, check=False,
                                timeout=None), tmp)
    return True


def keep_run(out, name, s, flows_tmp):
    """Keeps a finished run in 'out': its flows from 'flows_tmp' as
    NAME.csv.gz, and its summary 's' (run_ns3()'s) as the line NAME.txt."""
    gzip_to(flows_tmp, out / f"{name}.csv.gz")
    (out / f"{name}.txt").write_text(
        " ".join(f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}"
                 for k, v in s.items()
                 if k not in ("completed", "thresholds", "rows", "trace"))
        + "\n")


def gzip_to(src, dst):
    """Gzips 'src' into 'dst' (atomically) and removes it.  No name or time
    in the gzip header: the same run, the same bytes."""
    with open(src, "rb") as f, open(f"{dst}.tmp", "wb") as raw, \
            gzip.GzipFile("", "wb", fileobj=raw, mtime=0) as g:
        shutil.copyfileobj(f, g)
    Path(f"{dst}.tmp").rename(dst)
    src.unlink()


def flows_digest(csv_gz):
    """SHA-256 of a kept run's flows, decompressed (the gzip bytes depend on
    zlib's version; the flows depend only on the run)."""
    with gzip.open(csv_gz, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read_checksums(out):
    """{NAME.csv: digest} of 'out'/CHECKSUMS, if any."""
    path = out / CHECKSUMS
    if not path.exists():
        return {}
    return {name: digest for digest, name in
            (line.split() for line in path.read_text().splitlines())}


def checksums(out):
    """'DIGEST  NAME.csv' of every run kept in 'out', sorted, and of the runs
    CHECKSUMS listed whose flows are not kept here: what the same run on the
    same commit gives again, byte for byte (--verify)."""
    kept = read_checksums(out)
    kept.update({p.name[:-len(".gz")]: flows_digest(p)
                 for p in out.glob("*.csv.gz")
                 if not p.name.endswith((".trace.csv.gz", ".waits.csv.gz"))})
    return "".join(f"{kept[name]}  {name}\n" for name in sorted(kept))


def verify(out, common, pts):
    """Runs again, in a temporary folder, every point of 'pts' whose flows
    'out'/CHECKSUMS lists, and compares them; the number that differ."""
    kept = read_checksums(out)
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for p in pts:
            name = f"{tag(*p)}.csv"
            if name not in kept:
                continue
            run_point(Path(tmp), common, p)
            same = flows_digest(Path(tmp) / f"{name}.gz") == kept[name]
            differ += not same
            print(f"{name}: {'the same' if same else 'DIFFERENT'}",
                  flush=True)
    return differ


def run_all(pts, kept, run, jobs=1):
    """run(p) for each point of 'pts', started in their order, 'jobs' at a
    time (each run is one thread of its own, awafs-ns3), with a progress bar
    on stderr; 'kept(p)' says whether p's run is kept already, and run(p)
    whether it ran."""
    t0, ran = time.monotonic(), 0
    done = sum(kept(p) for p in pts)
    progress(done, len(pts), ran, 0)
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        for f in as_completed([pool.submit(run, p) for p in pts]):
            if f.result():
                ran += 1
                done += 1
                progress(done, len(pts), ran, time.monotonic() - t0)
    finally:
        # After a failed run (or ^C) none starts; those under way end.
        pool.shutdown(cancel_futures=True)
    print(file=sys.stderr)


def progress(done, total, ran, elapsed):
    """One line on stderr: a bar, the runs done, and the time left at the
    pace of the runs this invocation ran."""
    width = 30
    fill = width * done // total if total else width
    eta = "?"
    if ran:
        left = elapsed / ran * (total - done)
        eta = f"{int(left // 3600)}h{int(left % 3600 // 60):02d}m"
    print(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} runs, "
          f"{elapsed / 60:.1f} min, ETA {eta}  ", end="", file=sys.stderr,
          flush=True)


def point_flows(out, w, load, s, seeds, warmup_s, part=None):
    """Of the kept runs of (w, load, s) over 'seeds', the flows that started
    'warmup_s' or later (of a mix, those of 'part'): (runs kept, {seed: its
    short FCTs, if any}, long FCTs, completed, all), or None if no run is
    kept."""
    runs, short, long_, done, total = 0, {}, [], 0, 0
    for seed in seeds:
        path = out / f"{tag(w, load, s, seed)}.csv.gz"
        if not path.exists():
            continue
        runs += 1
        flows = [r for r in read_flows(path) if r["start_s"] >= warmup_s
                 and r.get("part") == part]
        total += len(flows)
        done += sum(r["fct_ms"] is not None for r in flows)
        fcts = [r["fct_ms"] for r in flows
                if r["fct_ms"] is not None and r["size"] <= SHORT_MAX]
        if fcts:
            short[seed] = fcts
        long_ += [r["fct_ms"] for r in flows
                  if r["fct_ms"] is not None and r["size"] > SHORT_MAX]
    return (runs, short, long_, done, total) if runs else None


def summary(out, pts, regime, warmup_s=0.0, against=None):
    """The markdown table of every point with at least one finished run,
    of the flows that started 'warmup_s' or later into their run; each
    scheme's short mean against scheme 'against' at its point or, without
    it, against the best static scheme there (the best static thresholds
    in hindsight: of the sweep's static-refpct schemes, pias-matched and
    auto-settled, the one with the lowest short mean), where one ran."""
    lines = [f"Leaf-spine on ns-3: {regime}.", "",
             "Short flows: at most 100 kB, pooled over the seeds; the "
             "interval is a 95 % bootstrap of their mean (resampled within "
             "each seed, eval/static_sweep.py's mean_ci(), a random stream "
             "of each interval's own); p99 where at "
             f"least {P99_MIN_FLOWS} are pooled, else their max. Against "
             f"{against or 'the best static'}: the change of the short mean "
             "against "
             + (f"{against}'s" if against else "the static scheme (the "
                "sweep's static-refpct ones, pias-matched and auto-settled) "
                "of the lowest one")
             + " at that point, with its 95 % bootstrap interval "
             "(eval/static_sweep.py's ratio_ci()).", "",
             *([f"Flows that started in a run's first {warmup_s:g} s "
                "(while the thresholds learn from the first window) are "
                "left out.", ""] if warmup_s else []),
             "| workload | load | scheme | seeds | flows completed | short "
             "mean FCT (ms) | 95 % CI | short p99 (ms) | short median (ms) | "
             f"short p90 (ms) | short over {STALL_MS} ms | long mean FCT "
             f"(ms) | short mean against {against or 'the best static'} "
             "[95 % CI] |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    groups = {}
    for w, load, s, seed in pts:
        groups.setdefault((w, load, s), []).append(seed)
    kept = {(w, load, s, part): point_flows(out, w, load, s, seeds,
                                            warmup_s, part)
            for (w, load, s), seeds in groups.items() for part in parts(w)}
    kept = {k: v for k, v in kept.items() if v}
    best = {}
    for (w, load, s, part), (_, short, _, _, _) in kept.items():
        if (s == against if against else is_static(s)) and short:
            m = statistics.mean(pooled(short))
            if (w, load, part) not in best or m < best[w, load, part][1]:
                best[w, load, part] = (s, m, short)
    for (w, load, s, part), (n, short, long_, done, total) in kept.items():
        if short:
            mean, (lo, hi) = mean_ci(short, interval_rng(w, load, s, part))
            all_short = pooled(short)
            stalled = sum(v > STALL_MS for v in all_short)
            cells = (f"{mean:.3f} | {lo:.3f}-{hi:.3f} | {tail(all_short)} | "
                     f"{percentile(all_short, 0.5):.3f} | "
                     f"{percentile(all_short, 0.9):.3f} | {stalled} "
                     f"({100 * stalled / len(all_short):.2f} %)")
        else:
            cells = "- | - | - | - | - | -"
        lmean = f"{statistics.mean(long_):.3f}" if long_ else "-"
        cell = "-"
        if short and (w, load, part) in best:
            name, _, ref = best[w, load, part]
            if name == s:
                cell = "(the reference)" if against else "(best)"
            else:
                pct, (plo, phi) = ratio_ci(short, ref,
                                           interval_rng(w, load, s, part,
                                                        name))
                cell = f"{pct:+.1f} % [{plo:+.1f}, {phi:+.1f}]"
        lines.append(f"| {part_name(w, part)} | {load * 100:.0f} % | {s} | "
                     f"{n} | {done}/{total} | {cells} | {lmean} | {cell} |")
    return "\n".join(lines) + "\n"


def class_table(title, by_point, cell):
    """A section of 'title' with a row per (workload, load, scheme, part)
    of 'by_point' and a column per size class: cell(values) of each class,
    "-" for none; "" if 'by_point' is empty."""
    if not by_point:
        return ""
    lines = ["", title, "",
             *markdown.head(["workload", "load", "scheme",
                             *(name for _, name in SIZE_CLASSES)])]
    for (w, load, s, part), by_class in by_point.items():
        lines.append(markdown.row(
            [part_name(w, part), f"{load * 100:.0f} %", s,
             *(cell(v) if v else "-" for v in by_class)]))
    return "\n".join(lines) + "\n"


def short_by_class(path, warmup_s):
    """(row, its SIZE_CLASSES index) of each short flow of the kept run at
    'path' that started 'warmup_s' or later and completed."""
    for r in read_flows(path):
        if (r["start_s"] >= warmup_s and r["fct_ms"] is not None
                and r["size"] <= SHORT_MAX):
            yield r, next(i for i, (top, _) in enumerate(SIZE_CLASSES)
                          if r["size"] <= top)


def size_section(out, pts, warmup_s=0.0):
    """The short flows' mean FCT by size class, per point and scheme,
    pooled over the seeds, of the flows that started 'warmup_s' or later:
    where a scheme's short mean is won or lost."""
    fcts = {}
    for w, load, s, seed in pts:
        path = out / f"{tag(w, load, s, seed)}.csv.gz"
        if not path.exists():
            continue
        for r, i in short_by_class(path, warmup_s):
            fcts.setdefault((w, load, s, r.get("part")),
                            [[] for _ in SIZE_CLASSES])[i].append(
                                r["fct_ms"])
    return class_table("Short flows by size: mean FCT (ms) and flows, "
                       "pooled over the seeds:", fcts,
                       lambda v: f"{statistics.mean(v):.3f} ({len(v)})")


def short_fcts(out, point, warmup_s, part):
    """{id: FCT} of the short flows of run 'point' (of a mix, of 'part')
    that started 'warmup_s' or later and completed; {} if it is not
    kept."""
    path = out / f"{tag(*point)}.csv.gz"
    if not path.exists():
        return {}
    return {r["id"]: r["fct_ms"] for r in read_flows(path)
            if r["start_s"] >= warmup_s and r.get("part") == part
            and r["size"] <= SHORT_MAX and r["fct_ms"] is not None}


def stall_section(out, pts, warmup_s=0.0):
    """The short mean in two parts, per point and scheme, pooled over the
    seeds: the mean of the short flows that took at most STALL_MS, with
    its 95 % interval (what the queues decided: all that the FCT model of
    percentiles=auto describes), and what the few over it (a timer's
    wait: ns-3's 40 ms delayed ACK, an RTO) add to the short mean, their
    FCTs summed over all the short flows; and how many of those flows took
    over STALL_MS under another scheme of the point too (the same flows
    run under every scheme): whether a stall belongs to the flow or is
    chance.  Each run's flows are read once."""
    groups = {}
    for w, load, s, seed in pts:
        groups.setdefault((w, load, s), []).append(seed)
    fcts = {(w, load, s, part, seed): short_fcts(out, (w, load, s, seed),
                                                  warmup_s, part)
            for w, load, s, seed in pts for part in parts(w)}
    stalled = {k: {i for i, v in f.items() if v > STALL_MS}
               for k, f in fcts.items()}
    rows = []
    for (w, load, s), seeds in groups.items():
        others = {o for (ow, oload, o) in groups
                  if (ow, oload) == (w, load) and o != s}
        for part in parts(w):
            short = {seed: list(fcts[w, load, s, part, seed].values())
                     for seed in seeds if fcts[w, load, s, part, seed]}
            if not short:
                continue
            every = pooled(short)
            quick = {seed: [v for v in f if v <= STALL_MS]
                     for seed, f in short.items()}
            quick = {seed: f for seed, f in quick.items() if f}
            mean, (lo, hi) = mean_ci(quick, interval_rng(
                w, load, s, part, f"at most {STALL_MS} ms"))
            slow = [v for v in every if v > STALL_MS]
            shared = sum(
                len(stalled[w, load, s, part, seed]
                    & set().union(*(stalled[w, load, o, part, seed]
                                    for o in others)))
                for seed in seeds)
            rows.append(markdown.row(
                [part_name(w, part), f"{load * 100:.0f} %", s,
                 f"{statistics.mean(every):.3f}",
                 f"{mean:.3f} [{lo:.3f}, {hi:.3f}]", len(slow),
                 f"{sum(slow) / len(every):.3f}", shared]))
    if not rows:
        return ""
    return "\n".join(
        ["", f"The short mean in two parts: the flows that took at most "
         f"{STALL_MS} ms (what the queues decided), and what the flows "
         f"over {STALL_MS} ms (a timer's wait) add to it; of those, how "
         "many took that long under another scheme too:", "",
         *markdown.head(["workload", "load", "scheme", "short mean (ms)",
                         f"at most {STALL_MS} ms: mean [95 % CI]",
                         f"over {STALL_MS} ms", "they add (ms)",
                         "under another scheme too"]),
         *rows]) + "\n"


def thresholds_at(out, point):
    """f(time_s) -> the thresholds of run 'point' at leaf 0's port toward
    host 0 at that time: a learning scheme's from its trace (the last set
    computed by then; the first is the initial one, at 0 s), a static
    scheme's its own; None for the others (FIFO, SRPT)."""
    w, load, s, _ = point
    trace = out / f"{tag(*point)}.trace.csv.gz"
    if trace.exists():
        rounds = read_trace(trace)
        times = [r["time_s"] for r in rounds]
        return lambda t: rounds[max(bisect.bisect_right(times, t) - 1,
                                    0)]["thr"]
    if s == "pias" or is_static(s):
        thr = static_thresholds(s, w, load)
        return lambda t: thr
    return None


@functools.lru_cache(maxsize=None)
def static_thresholds(scheme, workload, load):
    """The thresholds of static 'scheme' on 'workload' at 'load', computed
    once for all its seeds (auto-settled's take a run of awafs-sim)."""
    args = scheme_args(scheme, workload, load)
    return [int(v) for v in
            str(args[args.index("--thresholds") + 1]).split(",")]


def demotion_section(out, pts, warmup_s=0.0):
    """How far the short flows of each size class are demoted: the mean
    number of thresholds below their size (before their last segment), by
    the set of leaf 0's port toward host 0 when each started, per point
    and scheme, pooled over the seeds.  Beside size_section()'s FCTs, it
    shows whether a scheme loses a size class because its thresholds put
    those flows lower."""
    counts = {}
    for point in pts:
        path = out / f"{tag(*point)}.csv.gz"
        w, load, s, _ = point
        # Pairs: the traced port, toward host 0, carries only the flows
        # from higher hosts, one workload of two; its set is no other's.
        if w in MIXES and MIXES[w][1] == "--pair-workload":
            continue
        at = thresholds_at(out, point) if path.exists() else None
        if at is None:
            continue
        for r, i in short_by_class(path, warmup_s):
            counts.setdefault((w, load, s, r.get("part")),
                              [[] for _ in SIZE_CLASSES])[i].append(
                                  sum(t < r["size"]
                                      for t in at(r["start_s"])))
    return class_table("Demotions by size: the thresholds below a short "
                       "flow's size (of leaf 0's port toward host 0 when it "
                       "started), mean over the flows, pooled over the "
                       "seeds:", counts,
                       lambda v: f"{statistics.mean(v):.1f}")


def follow_section(out, pts):
    """How fast the learning schemes' thresholds followed the shift: per
    load and scheme, over its seeds, the time from the second workload's
    first flow to the first set near the one they settled on; beside it,
    how long the second workload's flows kept arriving (its half of the
    run: the flows that a scheme that follows later serves with the
    first workload's thresholds)."""
    times, spans = {}, {}
    for w, load, s, seed in pts:
        trace = out / f"{tag(w, load, s, seed)}.trace.csv.gz"
        if w != "shift" or not trace.exists():
            continue
        rounds = read_trace(trace)
        flows = read_flows(out / f"{tag(w, load, s, seed)}.csv.gz")
        second = [r["start_s"] for r in flows if r["part"] == 1]
        spans.setdefault((load, s), []).append(max(second) - min(second))
        if rounds:
            times.setdefault((load, s), []).append(follow_s(
                [(r["time_s"], r["thr"]) for r in rounds], min(second)))
    if not times:
        return ""
    lines = ["", "The shift: from the first web-search flow to the first "
             "thresholds within a factor of 2 of those the run ended with "
             "(leaf 0's port toward host 0), over the seeds; and from the "
             "first web-search flow to the last (the web-search half), "
             "their median:", "",
             *markdown.head(["load", "scheme", "seeds", "followed",
                             "median (s)", "range (s)",
                             "web-search half (s)"])]
    for (load, s), ts in sorted(times.items()):
        lines.append(markdown.row([
            f"{load * 100:.0f} %", s, *follow_cells(ts, 2),
            f"{statistics.median(spans[load, s]):.2f}"]))
    return "\n".join(lines) + "\n"


def keep_regime(out, regime_args, prog):
    """Creates 'out' and records in out/grid.json the options its runs are
    of; exits if it holds runs of other options: the runs kept must be of
    one command, or their summary would mix regimes."""
    out.mkdir(parents=True, exist_ok=True)
    config = out / "grid.json"
    if config.exists():
        kept = json.loads(config.read_text())
        if kept != regime_args:
            sys.exit(f"{prog}: {out} holds runs of '{' '.join(kept)}', "
                     f"not '{' '.join(regime_args)}'")
    else:
        config.write_text(json.dumps(regime_args) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True,
                    help="folder of the runs' files and summary.md")
    ap.add_argument("--flows", type=int, default=10000, help="flows a run")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=1,
                    help="the seeds are this one and the next SEEDS - 1")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help=f"of {', '.join(WORKLOADS)}, and the mixes "
                    f"{' and '.join(MIXES)} (default: the four)")
    ap.add_argument("--loads", default=",".join(map(str, LOADS)))
    ap.add_argument("--schemes", default=",".join(HEADLINE + MORE))
    ap.add_argument("--window-ms", type=int, default=1000,
                    help="W_update (the thesis: 250 ms to 1 s)")
    ap.add_argument("--interval-ms", type=int, default=200,
                    help="T_schedule (the thesis's 200 ms)")
    ap.add_argument("--ns3-args", default="",
                    help="more options of awafs-ns3, e.g. a smaller "
                    "'--leaves 3 --hosts-per-leaf 4'")
    ap.add_argument("--jobs", type=int, default=1,
                    help="runs at a time (each takes one core)")
    ap.add_argument("--summary-only", action="store_true",
                    help="run nothing, summarise the runs kept")
    ap.add_argument("--waits", action="store_true",
                    help="keep where each run's packets waited too "
                    "(NAME.waits.csv.gz; python -m sim.ns3_waits "
                    "--summary-only sums them up)")
    ap.add_argument("--verify", action="store_true",
                    help="run again, elsewhere, the runs of this command "
                    f"that OUT/{CHECKSUMS} lists, and compare their flows "
                    "with it (exit status 1 if any differ)")
    ap.add_argument("--against", help="a scheme each scheme's short mean "
                    "is compared with (default: the best static: "
                    "pias-matched, auto-settled or a static-refpct)")
    ap.add_argument("--warmup-s", type=float, default=0.0,
                    help="leave out of the summary the flows that started "
                    "this early in their run")
    args = ap.parse_args(argv)

    if not NS3.exists():
        sys.exit(f"ns3_grid: {NS3} not built (make ns3)")
    common = ["--topology", "leaf-spine", "--transport", "dctcp",
              "--queues", 8, "--flows", args.flows,
              "--window-ms", args.window_ms, "--interval-ms",
              args.interval_ms, *args.ns3_args.split()]
    schemes = args.schemes.split(",")
    for s in schemes:
        if not known(s):
            ap.error(f"--schemes: unknown scheme {s}")
    for w in args.workloads.split(","):
        if w not in WORKLOADS and w not in MIXES:
            ap.error(f"--workloads: unknown workload {w}")
        if w in MIXES and not set(schemes) <= set(HEADLINE + MORE):
            ap.error(f"--workloads {w}: a mix has no thresholds of its own "
                     "(static-refpct, pias-matched, auto-settled)")
    pts = points(args.workloads.split(","),
                 [float(x) for x in args.loads.split(",")], schemes,
                 range(args.first_seed, args.first_seed + args.seeds))

    regime_args = [str(a) for a in common]
    keep_regime(args.out, regime_args, "ns3_grid")

    if args.verify:
        sys.exit(1 if verify(args.out, common, pts) else 0)
    if not args.summary_only:
        run_all(pts, lambda p: (args.out / f"{tag(*p)}.csv.gz").exists(),
                lambda p: run_point(args.out, common, p, args.waits),
                args.jobs)
    regime = (f"`{NS3.name} {' '.join(regime_args)} --workload W --load L "
              "--seed S --scheme ...`")
    text = (summary(args.out, pts, regime, args.warmup_s, args.against)
            + size_section(args.out, pts, args.warmup_s)
            + stall_section(args.out, pts, args.warmup_s)
            + demotion_section(args.out, pts, args.warmup_s)
            + follow_section(args.out, pts))
    (args.out / "summary.md").write_text(text)
    (args.out / CHECKSUMS).write_text(checksums(args.out))
    print(text, end="")


if __name__ == "__main__":
    main()

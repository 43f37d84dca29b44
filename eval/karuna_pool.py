"""Karuna's comparison (seed 003, §8.2.1) pooled over seeds, for the ns-3
driver (sim/ns3_karuna.py) and the testbed's report (eval/report.py): the
deadline flows' miss rate and the other flows' FCT by type, each a mean
with its 95 % bootstrap interval (eval/static_sweep.py, resampled within
each seed), and each scheme's change against deadline-on-top."""

from eval.static_sweep import (P99_MIN_FLOWS, interval_rng, mean_ci, pooled,
                               ratio_ci)
from testbed import markdown
from testbed.micro import percentile

DEADLINE, SIZED, UNKNOWN = 1, 2, 3
SMALL = 100000              # Small flows, as the literature counts them.
LARGE = 5000000             # The Long Flow workload's large ones (Fig. 14).
# The paper's comparison: Karuna against the deadline-aware schemes.
AGAINST = "deadline-on-top"
CLASSES = ("type 2", "type 3", "type 3 small")
# Aging's (Fig. 14): what starves is large.
AGING_CLASSES = ("type 2", "type 3", "type 2 large", "type 3 large")


def classes(rows, warmup_s):
    """{class: [FCT (ms)]} of the flows of 'rows' (each with start_s, type,
    size, fct_ms, None if it did not complete, and deadline_ms) that
    started at 'warmup_s' or later and completed, by Karuna's type (2, 3),
    the type 3 flows of at most SMALL bytes, those of each type of more
    than LARGE bytes, and the non-deadline flows together; and {"missed":
    [100 if the deadline flow missed its deadline or did not complete,
    else 0]}."""
    out = {"type 2": [], "type 3": [], "type 3 small": [], "type 2 large": [],
           "type 3 large": [], "non-deadline": [], "missed": []}
    for r in rows:
        if r["start_s"] < warmup_s:
            continue
        if r["type"] == DEADLINE:
            out["missed"].append(
                100 * (r["fct_ms"] is None or r["fct_ms"] > r["deadline_ms"]))
        elif r["fct_ms"] is not None:
            out["non-deadline"].append(r["fct_ms"])
            out[f"type {r['type']}"].append(r["fct_ms"])
            if r["type"] == UNKNOWN and r["size"] <= SMALL:
                out["type 3 small"].append(r["fct_ms"])
            if r["size"] > LARGE:
                out[f"type {r['type']} large"].append(r["fct_ms"])
    return out


def caption(warmup_s):
    return ("Deadline flows missed (finished after their deadline, or not "
            "at all), and the non-deadline flows' FCT (ms) by type: type 2 "
            "says its size, type 3 does not (small: at most "
            f"{SMALL // 1000} KB, large: over {LARGE // 1000000} MB); "
            "pooled over the seeds, flows that "
            f"started in a run's first {warmup_s:g} s left out; 95 % "
            "bootstrap intervals (resampled within each seed); the "
            "non-deadline flows' p95 nearest-rank where at least "
            f"{P99_MIN_FLOWS} are pooled, else their maximum.")


def ci_cell(groups, *what):
    if not pooled(groups):
        return "-"
    mean, (lo, hi) = mean_ci(groups, interval_rng("karuna", *what))
    return f"{mean:.2f} [{lo:.2f}, {hi:.2f}]"


def tables(kept, against=AGAINST, shown=CLASSES):
    """The lines of the two tables for 'kept', {scheme: {seed: classes()}}:
    each scheme's pooled classes 'shown', and their change against
    'against''s over the seeds both ran."""
    def groups(s, c):
        return {seed: k[c] for seed, k in kept[s].items() if k[c]}

    lines = markdown.head(["scheme", "seeds", "deadline flows",
                           "missed % [95 % CI]",
                           *(f"{c} mean" for c in shown),
                           "non-deadline p95"])
    for s in kept:
        missed = groups(s, "missed")
        every = pooled(groups(s, "non-deadline"))
        p95 = ("-" if not every
               else f"{percentile(every, 0.95):.2f}"
               if len(every) >= P99_MIN_FLOWS else f"max {max(every):.2f}")
        lines.append(markdown.row([
            s, str(len(kept[s])), str(len(pooled(missed))),
            ci_cell(missed, s, "missed"),
            *(ci_cell(groups(s, c), s, c) for c in shown), p95]))
    if against not in kept:
        return lines
    lines += ["", f"Against {against} (the same flows): the change of "
              "each class's mean FCT, with its 95 % interval.", "",
              *markdown.head(["scheme", *shown, "non-deadline"])]
    for s in kept:
        if s == against:
            continue
        cells = []
        for c in (*shown, "non-deadline"):
            a, b = groups(s, c), groups(against, c)
            common = {k: a[k] for k in a if k in b}
            if not common:
                cells.append("-")
                continue
            pct, (lo, hi) = ratio_ci(common, {k: b[k] for k in common},
                                     interval_rng("karuna", s, c, against))
            cells.append(f"{pct:+.1f} % [{lo:+.1f}, {hi:+.1f}]")
        lines.append(markdown.row([s, *cells]))
    return lines

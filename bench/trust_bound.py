"""What a lying tenant can still do in trust=switch|verify (issue 28): the
micro benchmark's honest traffic (testbed/micro.py, real TCP through nginx)
with and without a tenant that forges FINs and RSTs, loops SYN/FIN, leaves
sequence gaps, floods the flow table and sends empty and padded segments
(testbed/attacker.py) into the same awafs port at a given wire rate.

    python3 -m bench.trust_bound [--trust switch,verify] [--seeds 3]
        [--scheme awafs-pct10|awafs-pct70|awafs-auto|fifo]
        [--window-weight source] [--min-thresholds BYTES]
        [--attacks all,no-completions] [--flows N] [--load BPS]
        [--attack-rate BPS] [--rate-limit N] [--out DIR]

For each trust mode and seed, the same arrivals and sizes run honest alone,
then with the attacker on a fifth host, n4, from a second before the first
request to the last response, once per attack set (ATTACK_SETS).  The
bounds, each over the seeds (the largest):
- thresholds: the change of the median threshold the port learned while
  the honest flows ran (from 2 s on, once the window can hold min-samples),
  and the largest distance of any threshold sampled then from the honest
  run's median;
- queue 0: the attacker's share of the bytes queue 0 carried, as the
  bytes queue 0 took beyond the honest run's (same flows), over all it took;
- FCT: the change of the honest short and long flows' mean and p99.
Writes DIR/trust-bound.csv (a row per run) and DIR/trust-bound.md
(trust-bound-SCHEME.* for another --scheme than awafs-pct10, with
-by-source for --window-weight source and -minBYTES for --min-thresholds),
and prints the report."""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from testbed.micro import (LONG, SHORT, MicroBench, p99,
                           timed, write_study)

REPO = Path(__file__).resolve().parent.parent

# The thresholds' rule: RefPct 10 or 70, or the FCT model
# (percentiles=auto); and a threshold no flow reaches, what the same
# attacks do without adaptation (in trust=switch each source's queue-0
# budget still sends bulk data to queue 1: not FIFO).
SCHEMES = {"awafs-pct10": ("RefPct 10 from 1000 kB", "trust-bound"),
           "awafs-pct70": ("RefPct 70 from 1000 kB", "trust-bound-pct70"),
           "awafs-auto": ("percentiles=auto from 1000 kB",
                          "trust-bound-auto"),
           "fifo": ("a static threshold of 4 GB", "trust-bound-fifo")}
# What the attacker sends (testbed/attacker.py --attacks): everything, and
# everything but the attacks that end messages (SYN/FIN loops, gaps).
ATTACK_SETS = {"all": "forged,loop,gap,flood,padded,empty",
               "no-completions": "forged,flood,padded,empty"}
# Each source's completions: well above an honest server's (about 25 a
# second at 50 Mbit/s), far below a SYN/FIN loop's.
RATE_LIMIT = 100
ATTACKER = "n4"


def mean_flow_bytes():
    return 0.8 * SHORT + 0.2 * LONG


def attacker_argv(bench, seconds, rate, seed, attacks):
    atk, rx = bench.net[ATTACKER], bench.receiver
    return [sys.executable, str(REPO / "testbed" / "attacker.py"),
            "--attacks", ATTACK_SETS[attacks],
            "--iface", "eth0",
            "--src-mac", atk.MAC(), "--dst-mac", rx.MAC(),
            "--src", atk.addr, "--dst", rx.addr, "--rate", str(rate),
            "--seconds", str(seconds), "--seed", str(seed)]


def run_one(bench, trust, seed, args, attack):
    """One run; 'attack' names an ATTACK_SETS entry, or is None."""
    extra = {"trust": trust, "completion-rate-limit": args.rate_limit,
             "window-weight": args.window_weight}
    if args.min_thresholds is not None:
        extra["min-thresholds"] = args.min_thresholds
    proc = None
    if attack:
        seconds = 1 + 1.5 * args.flows * mean_flow_bytes() * 8 / args.load
        proc = bench.net[ATTACKER].popen(
            *attacker_argv(bench, seconds, args.attack_rate, seed, attack),
            stdout=subprocess.PIPE, text=True)
        time.sleep(1)
    try:
        res = bench.measure(args.scheme, args.flows, args.load, seed=seed,
                            sample_s=0.25, extra=extra)
    finally:
        atk_out = ""
        if proc:
            proc.terminate()
            atk_out = proc.communicate()[0]
    s, lg = res.fcts_ms(SHORT), res.fcts_ms(LONG)
    thr = [t for at, t in res.thresholds if at >= 2.0] or \
        [t for _, t in res.thresholds]
    q = res.port["queues"]
    d = res.port["details"]
    return {"trust": trust, "seed": seed, "attack": attack or "none",
            "short_mean_ms": statistics.mean(s), "short_p99_ms": p99(s),
            "long_mean_ms": statistics.mean(lg), "long_p99_ms": p99(lg),
            "thr_median": statistics.median(thr), "thr_min": min(thr),
            "thr_max": max(thr),
            "q0_bytes": int(q[0]["enqueued-bytes"]),
            "q1_bytes": int(q[1]["enqueued-bytes"]),
            "dropped": res.port["dropped"],
            "carried_mbps": res.carried_bps() / 1e6,
            "completions": int(d.get("completions", 0)),
            "completions_limited": int(d.get("completions-limited", 0)),
            "out_of_window": int(d.get("out-of-window", 0)),
            "padded_frames": int(d.get("padded-frames", 0)),
            "byte_free_over_budget": int(d.get("byte-free-over-budget", 0)),
            "gaps_trimmed": int(d.get("gaps-trimmed", 0)),
            "attacker": atk_out.strip(),
            "transport": res.transport["server_cc"]}


def change(a, b):
    return 100.0 * (a - b) / b


def effects(h, a):
    """What attack run 'a' changed against honest run 'h' (same seed)."""
    return {
        "thr_median": change(a["thr_median"], h["thr_median"]),
        "thr_any": max(abs(change(a["thr_min"], h["thr_median"])),
                       abs(change(a["thr_max"], h["thr_median"]))),
        "q0_share": 100.0 * max(0, a["q0_bytes"] - h["q0_bytes"])
        / max(1, a["q0_bytes"]),
        "short_mean": change(a["short_mean_ms"], h["short_mean_ms"]),
        "short_p99": change(a["short_p99_ms"], h["short_p99_ms"]),
        "long_mean": change(a["long_mean_ms"], h["long_mean_ms"]),
        "long_p99": change(a["long_p99_ms"], h["long_p99_ms"])}


def bounds(rows):
    """{(trust, attack set): the largest effect of each kind over the
    seeds}."""
    honest = {(r["trust"], r["seed"]): r for r in rows
              if r["attack"] == "none"}
    out = {}
    for a in rows:
        if a["attack"] == "none":
            continue
        worst = out.setdefault((a["trust"], a["attack"]), {})
        for k, v in effects(honest[(a["trust"], a["seed"])], a).items():
            if abs(v) >= abs(worst.get(k, 0.0)):
                worst[k] = v
    return out


def report(rows, args):
    lines = [
        "# Trust bound: a lying tenant against the micro benchmark",
        "",
        f"`python3 -m bench.trust_bound --trust {','.join(args.trust)} "
        f"--scheme {args.scheme} --window-weight {args.window_weight} "
        + (f"--min-thresholds {args.min_thresholds} "
           if args.min_thresholds is not None else "") +
        f"--attacks {','.join(args.attacks)} --seeds {args.seeds} "
        f"--flows {args.flows} --load {args.load:.0f} "
        f"--attack-rate {args.attack_rate:.0f} "
        f"--rate-limit {args.rate_limit}`",
        "",
        f"Honest: {args.flows} flows (80 % 10 kB, 20 % 1000 kB from nginx),"
        f" offered {args.load / 1e6:.0f} Mbit/s into a port shaped to "
        f"100 Mbit/s, {args.scheme} (2 queues, {SCHEMES[args.scheme][0]}, "
        "window "
        f"1 s, window-weight {args.window_weight}"
        + (f", min-thresholds {args.min_thresholds}"
           if args.min_thresholds is not None else "")
        + "), completion-rate-limit "
        f"{args.rate_limit}, DCTCP. Attacker "
        f"(testbed/attacker.py) on {ATTACKER}: "
        f"{args.attack_rate / 1e6:.0f} Mbit/s of wire into the same port; "
        "attack sets: "
        + "; ".join(f"{k}: {v}" for k, v in ATTACK_SETS.items()
                    if k in args.attacks) + ".",
        "",
        "| trust | seed | attack | short mean (ms) | short p99 | long mean "
        "| long p99 | threshold median (min–max) | queue 0 bytes | "
        "queue 1 bytes | dropped | carried Mbit/s | completions | limited | "
        "out of window | padded | over budget | attacker sent |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        "---|---|"]
    for r in rows:
        lines.append(
            f"| {r['trust']} | {r['seed']} | {r['attack']}"
            f" | {r['short_mean_ms']:.2f} | {r['short_p99_ms']:.2f} | "
            f"{r['long_mean_ms']:.0f} | {r['long_p99_ms']:.0f} | "
            f"{r['thr_median']:.0f} ({r['thr_min']}–{r['thr_max']}) | "
            f"{r['q0_bytes']} | {r['q1_bytes']} | {r['dropped']} | "
            f"{r['carried_mbps']:.1f} | {r['completions']} | "
            f"{r['completions_limited']} | "
            f"{r['out_of_window']} | {r['padded_frames']} | "
            f"{r['byte_free_over_budget']} | {r['attacker']} |")
    lines += ["", "Bounds, the largest over the seeds (attack against "
              "honest, same seed):", "",
              "| trust | attack | median threshold | any sampled threshold "
              "from the honest median | attacker's share of queue 0's bytes "
              "| short mean FCT | short p99 | long mean | long p99 |",
              "|---|---|---|---|---|---|---|---|---|"]
    for (trust, attack), b in sorted(bounds(rows).items()):
        lines.append(
            f"| {trust} | {attack} | {b['thr_median']:+.1f} % | "
            f"{b['thr_any']:.1f} % | {b['q0_share']:.1f} % | "
            f"{b['short_mean']:+.1f} % | {b['short_p99']:+.1f} % | "
            f"{b['long_mean']:+.1f} % | {b['long_p99']:+.1f} % |")
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--trust", default="switch,verify",
                    type=lambda s: s.split(","))
    ap.add_argument("--attacks", default=",".join(ATTACK_SETS),
                    type=lambda s: s.split(","),
                    help="attack sets to run: " + ", ".join(ATTACK_SETS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--scheme", default="awafs-pct10", choices=SCHEMES)
    ap.add_argument("--window-weight", default="completion",
                    choices=["completion", "source"])
    ap.add_argument("--min-thresholds", type=int,
                    help="the port's floor for the learned threshold")
    ap.add_argument("--flows", type=int, default=500)
    ap.add_argument("--load", type=float, default=50e6)
    ap.add_argument("--attack-rate", type=float, default=100e6)
    ap.add_argument("--rate-limit", type=int, default=RATE_LIMIT,
                    help="completion-rate-limit of the port")
    ap.add_argument("--out", default=str(REPO / "build" / "trust-bound"))
    args = ap.parse_args(argv)
    unknown = set(args.attacks) - set(ATTACK_SETS)
    if unknown:
        ap.error(f"unknown attack sets: {', '.join(sorted(unknown))}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    rows = []
    bench = MicroBench("dctcp", extra_hosts=[ATTACKER])
    try:
        for trust in args.trust:
            for seed in range(1, args.seeds + 1):
                for attack in [None, *args.attacks]:
                    rows.append(timed(
                        f"{trust} seed {seed} attack {attack}",
                        lambda: run_one(bench, trust, seed, args, attack)))
    finally:
        bench.close()
    stem = SCHEMES[args.scheme][1]
    if args.window_weight == "source":
        stem += "-by-source"
    if args.min_thresholds is not None:
        stem += f"-min{args.min_thresholds}"
    write_study(out, stem, rows, report(rows, args))


if __name__ == "__main__":
    main(sys.argv[1:])

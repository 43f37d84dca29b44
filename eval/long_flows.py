"""What the demo's long flows pay, per transport, and why (issue 35).

    python3 -m eval.long_flows [--transports bbr,cubic,dctcp] [--seeds 5]
                               [--flows 1000] [--load BPS] [--out DIR]

The demo's regime (testbed/micro.py: nginx, 80 % 10 kB / 20 % 1000 kB,
offered --load into a port shaped to 100 Mbit/s) under FIFO, the static
1000 kB threshold and AWAFS (RefPct 10, from 1000 kB), for each transport
and seed; the same seed gives every scheme the same arrivals and sizes.

While each run goes, the long-flow servers' sockets (n1 and n3, port 8080)
are read every 0.25 s with ss -ti: each connection with data in flight
gives its min_rtt and its cwnd, so the report can show what the
connections believed about the path under each scheme.

The fluid model: the same long-flow arrivals (their start times in the
run) served at the rate the port has left for them (its max-rate as TCP
payload, 1448 of every 1538 bytes of wire, less the short flows' bytes
over the run), either all at once in equal shares (processor sharing, what
fair congestion controls converge to) or one at a time in arrival order
(first-come-first-served, the best mean a size-blind scheduler can give
equal-size flows).  A scheduler that sorts by bytes sent cannot tell
equal-size long flows apart once they are past the last threshold, so the
measured means can only be compared with these two.

Writes DIR/long-flows.csv (a row per run) and DIR/long-flows.md (means
with 95 % confidence intervals over the seeds, and the model), and prints
the report."""

import argparse
import math
import re
import statistics
import sys
import threading
from pathlib import Path

from testbed.micro import (LONG, SHORT, MicroBench, p99,
                           timed, write_rows, write_study)

REPO = Path(__file__).resolve().parent.parent

SCHEMES = ["fifo", "static-1000KB", "awafs-pct10"]
RATE = 100e6
PAYLOAD_PER_WIRE = 1448 / (1514 + 24)
SAMPLE_S = 0.25
# Student's t for a two-sided 95 % interval, by degrees of freedom.
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36,
       8: 2.31, 9: 2.26}


class SocketSampler(threading.Thread):
    """Reads min_rtt and cwnd of the connections of 'hosts' on port 8080
    that have unacknowledged data, every SAMPLE_S, until stop()."""

    def __init__(self, hosts):
        super().__init__(daemon=True)
        self.hosts = hosts
        self.samples = []       # (min_rtt ms, cwnd segments, conns at once)
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(SAMPLE_S):
            active = []
            for h in self.hosts:
                out = h.run("ss", "-tinH", "state", "established",
                            "sport", "=", ":8080", check=False).stdout
                for m in re.finditer(r"cwnd:(\d+).*?minrtt:([\d.]+)", out):
                    line = out[m.start():out.find("\n", m.start())]
                    if "unacked:" in line:
                        active.append((float(m.group(2)), int(m.group(1))))
            for rtt, cwnd in active:
                self.samples.append((rtt, cwnd, len(active)))

    def stop(self):
        self.done.set()
        self.join()


def processor_sharing(arrivals, size, rate):
    """Mean completion time of jobs of 'size' bytes arriving at 'arrivals'
    (s) on a server of 'rate' bytes/s shared equally by those present."""
    events = sorted(arrivals)
    left = {}                   # job -> bytes left
    t, i, fct = 0.0, 0, []
    while i < len(events) or left:
        nxt = events[i] if i < len(events) else math.inf
        if left:
            share = rate / len(left)
            job = min(left, key=left.get)
            end = t + left[job] / share
        else:
            end = math.inf
        if nxt <= end:
            if left:
                done = (nxt - t) * rate / len(left)
                for j in left:
                    left[j] -= done
            t = nxt
            left[i] = size
            i += 1
        else:
            for j in left:
                left[j] -= (end - t) * share
            t = end
            fct.append(t - events[job])
            del left[job]
    return statistics.mean(fct)


def fcfs(arrivals, size, rate):
    free, fct = 0.0, []
    for a in sorted(arrivals):
        free = max(free, a) + size / rate
        fct.append(free - a)
    return statistics.mean(fct)


def model(rows, seconds):
    """(processor sharing, FCFS) mean FCT in ms of the run's long flows."""
    long_starts = [float(r["start_s"]) for r in rows
                   if int(r["size"]) == LONG]
    short_bytes = sum(int(r["size"]) for r in rows if int(r["size"]) == SHORT)
    rate = RATE / 8 * PAYLOAD_PER_WIRE - short_bytes / seconds
    return (1000 * processor_sharing(long_starts, LONG, rate),
            1000 * fcfs(long_starts, LONG, rate))


def run_one(bench, transport, scheme, seed, args):
    sampler = SocketSampler([bench.net["n1"], bench.net["n3"]])
    sampler.start()
    try:
        res = bench.measure(scheme, args.flows, args.load, seed=seed)
    finally:
        sampler.stop()
    lg, s = res.fcts_ms(LONG), res.fcts_ms(SHORT)
    ps, fc = model(res.rows, res.port["seconds"])
    rtts = [r for r, _, _ in sampler.samples]
    # The cwnd spread among connections sending at the same time.
    cwnds = [c for _, c, _ in sampler.samples]
    return {"transport": transport, "scheme": scheme, "seed": seed,
            "short_mean_ms": statistics.mean(s), "short_p99_ms": p99(s),
            "long_mean_ms": statistics.mean(lg), "long_p99_ms": p99(lg),
            "n_long": len(lg), "carried_mbps": res.carried_bps() / 1e6,
            "dropped": res.port["dropped"], "ecn_marks": res.port["ecn_marks"],
            "sockets": ",".join(sorted({cc for h in
                                        res.transport["sockets_seen"].values()
                                        for cc in h})),
            "minrtt_median_ms": statistics.median(rtts) if rtts else "",
            "cwnd_median": statistics.median(cwnds) if cwnds else "",
            "cwnd_cv": (statistics.pstdev(cwnds) / statistics.mean(cwnds)
                        if len(cwnds) > 1 else ""),
            "model_ps_ms": ps, "model_fcfs_ms": fc}


def ci95(values):
    """(mean, half-width of the 95 % interval)."""
    m = statistics.mean(values)
    if len(values) < 2:
        return m, float("nan")
    return m, T95.get(len(values) - 1, 1.96) * statistics.stdev(values) \
        / math.sqrt(len(values))


def report(rows, args):
    out = ["# Long flows under FIFO, a static threshold and AWAFS, per "
           "transport", "",
           f"`python3 -m eval.long_flows --transports "
           f"{','.join(args.transports)} --seeds {args.seeds} --flows "
           f"{args.flows} --load {args.load:.0f}`", "",
           f"The demo's regime: {args.flows} flows (80 % 10 kB, 20 % "
           f"1000 kB) from nginx, offered {args.load / 1e6:.0f} Mbit/s into "
           f"a port shaped to {RATE / 1e6:.0f} Mbit/s of wire; seeds 1–"
           f"{args.seeds}. Means over the seeds ± the 95 % confidence "
           "interval's half-width (Student's t).", "",
           "| transport | scheme | short mean (ms) | long mean (ms) | long "
           "change vs FIFO, per seed → mean ± CI | min_rtt median (ms) | "
           "cwnd median | cwnd CV | model PS (ms) | model FCFS (ms) | "
           "measured / PS |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in args.transports:
        fifo = {r["seed"]: r for r in rows
                if r["transport"] == t and r["scheme"] == "fifo"}
        for sch in SCHEMES:
            rs = [r for r in rows if r["transport"] == t
                  and r["scheme"] == sch]
            if not rs:
                continue
            sm, sci = ci95([r["short_mean_ms"] for r in rs])
            lm, lci = ci95([r["long_mean_ms"] for r in rs])
            ch = [100 * (r["long_mean_ms"] / fifo[r["seed"]]["long_mean_ms"]
                         - 1) for r in rs if r["seed"] in fifo]
            cm, cci = ci95(ch)
            ratio = ci95([r["long_mean_ms"] / r["model_ps_ms"] for r in rs])
            vals = {k: [r[k] for r in rs if r[k] != ""]
                    for k in ("minrtt_median_ms", "cwnd_median", "cwnd_cv")}
            med = {k: (statistics.median(v) if v else float("nan"))
                   for k, v in vals.items()}
            out.append(
                f"| {t} | {sch} | {sm:.2f} ± {sci:.2f} | {lm:.0f} ± {lci:.0f}"
                f" | {', '.join(f'{c:+.0f}' for c in ch)} → "
                f"{cm:+.1f} ± {cci:.1f} % | {med['minrtt_median_ms']:.3f} | "
                f"{med['cwnd_median']:.0f} | {med['cwnd_cv']:.2f} | "
                f"{statistics.mean(r['model_ps_ms'] for r in rs):.0f} | "
                f"{statistics.mean(r['model_fcfs_ms'] for r in rs):.0f} | "
                f"{ratio[0]:.2f} ± {ratio[1]:.2f} |")
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--transports", default="bbr,cubic,dctcp",
                    type=lambda s: s.split(","))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--flows", type=int, default=1000)
    ap.add_argument("--load", type=float, default=55e6)
    ap.add_argument("--out", default=str(REPO / "build" / "long-flows"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for transport in args.transports:
        bench = MicroBench(transport)
        try:
            for seed in range(1, args.seeds + 1):
                for scheme in SCHEMES:
                    rows.append(timed(
                        f"{transport} seed {seed} {scheme}",
                        lambda: run_one(bench, transport, scheme, seed,
                                        args)))
        finally:
            bench.close()
        write_rows(out / "long-flows.csv", rows)   # Kept per transport.
    write_study(out, "long-flows", rows, report(rows, args))


if __name__ == "__main__":
    main(sys.argv[1:])

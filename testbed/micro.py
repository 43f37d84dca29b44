"""The thesis's micro benchmark (§5.3) on real TCP through the switch, as a
library for eval/micro_nginx.py, the demo and the evaluation smoke test.

Topology (testbed/senderbed.py, the thesis's: one switch, four hosts):
n1, n2 and n3 run nginx (Debian) in one cgroup with the host agent
attached; n0 runs testbed/httpload.py, which fetches files over HTTP/1.1
keep-alive connections: 80 % 10 kB files from n2, 20 % 1000 kB files from
n1 and n3 (10 % each) -- the thesis: long flows from N1 and N3, short ones
from N2, all to N0.  The bottleneck is the awafs egress port p0 toward n0,
shaped to 'rate'.  Every scheme sees the same arrivals and sizes for the
same seed.  Transport: testbed/transport.py (cubic, bbr, dctcp)."""

import csv
import statistics
import sys
import time

from testbed.senderbed import REPO, SenderBed, carried_bps
from testbed.servers import Nginx

SHORT, LONG = 10000, 1000000
# Two queues; T_schedule 200 ms; W_update 1 s (the thesis allows up to 1 s):
# at 100 Mbit/s flows arrive 100 times slower than at the thesis's 10 Gb/s,
# and 1 s holds about 30 completions at 55 % load.
COMMON = {"queues": 2, "window-ms": 1000, "interval-ms": 200,
          "min-samples": 10}
SCHEMES = {
    "fifo": {"mode": "static", "thresholds": 4294967295},
    "static-1KB": {"mode": "static", "thresholds": 1000},
    "static-1000KB": {"mode": "static", "thresholds": 1000000},
    "static-10KB": {"mode": "static", "thresholds": 10240},
    "awafs-pct10": {"mode": "adaptive", "thresholds": 1000000,
                    "percentiles": 10},
    "awafs-pct10-from-1KB": {"mode": "adaptive", "thresholds": 1000,
                             "percentiles": 10},
    "awafs-pct10-from-10KB": {"mode": "adaptive", "thresholds": 10000,
                              "percentiles": 10},
    "awafs-pct70": {"mode": "adaptive", "thresholds": 1000000,
                    "percentiles": 70},
    # The thresholds that minimise the FCT model (percentiles=auto).
    "awafs-auto": {"mode": "adaptive", "thresholds": 1000000,
                   "percentiles": "auto"},
}


class Result:
    """One scheme's run: the flows (size, start_s, fct_us), the port's
    threshold sampled while it ran, as (seconds from the start, bytes), the
    transport its sockets ran (testbed/transport.py Proof.record()) and the
    port's counters (testbed/senderbed.py run_clients())."""

    def __init__(self, name, rows, thresholds, transport=None, port=None):
        self.name = name
        self.rows = rows
        self.thresholds = thresholds
        self.transport = transport
        self.port = port

    def carried_bps(self):
        """The load the port carried, wire bit/s."""
        return carried_bps(self.port)

    def fcts_ms(self, size):
        return [int(r["fct_us"]) / 1000 for r in self.rows
                if int(r["size"]) == size]

    def summary(self):
        s, lg = self.fcts_ms(SHORT), self.fcts_ms(LONG)
        thr = [t for _, t in self.thresholds]
        return {"short_mean": statistics.mean(s), "short_p99": p99(s),
                "long_mean": statistics.mean(lg), "long_p99": p99(lg),
                "n_short": len(s), "n_long": len(lg),
                "thr_median": statistics.median(thr),
                "thr_min": min(thr), "thr_max": max(thr)}


def percentile(values, p):
    """The nearest-rank 'p' quantile (0 <= p < 1) of 'values' (not
    empty)."""
    s = sorted(values)
    return s[min(len(s) - 1, int(p * len(s)))]


def p99(values):
    return percentile(values, 0.99)


class MicroBench(SenderBed):
    """nginx on n1 and n3 (1000 kB files) and n2 (10 kB files); the HTTP
    load generator on n0."""

    def __init__(self, transport="cubic", extra_hosts=(), tunnel=None):
        super().__init__("micro", transport, extra_hosts=extra_hosts,
                         tunnel=tunnel)

    def start_servers(self):
        (self.www / "short").write_bytes(b"s" * SHORT)
        (self.www / "long").write_bytes(b"l" * LONG)
        return [Nginx(h, self.www, cgroup=self.cg) for h in self.senders]

    def measure(self, name, flows, load, rate=100000000, seed=1,
                sample_s=0.25, extra=None):
        """Runs 'flows' flows offered at 'load' bits/s under scheme 'name'
        (SCHEMES, with the keys of 'extra' on top) on a port shaped to
        'rate' bits/s."""
        out = self.www / f"{name}.csv"
        n1, n2, n3 = self.senders
        client = [sys.executable, str(REPO / "testbed" / "httpload.py"),
                  "--server", f"{n2.addr}:8080=short:{SHORT}:0.8",
                  "--server", f"{n1.addr}:8080=long:{LONG}:0.1",
                  "--server", f"{n3.addr}:8080=long:{LONG}:0.1",
                  "--load", str(load), "--flows", str(flows), "--seed",
                  str(seed), "--out", str(out)]
        rows, thresholds = super().measure(
            {**COMMON, **SCHEMES[name], **(extra or {}), "max-rate": rate},
            client, out, sample_s)
        return Result(name, rows, [(t, v[0]) for t, v in thresholds],
                      self.transport_record, self.port_stats)


def markdown_table(results):
    lines = ["| scheme | short mean FCT (ms) | short p99 (ms) | long mean (ms) "
             "| long p99 (ms) | threshold, median (min–max) over the run |",
             "|---|---|---|---|---|---|"]
    for r in results:
        s = r.summary()
        lines.append(f"| {r.name} | {s['short_mean']:.2f} | "
                     f"{s['short_p99']:.2f} | {s['long_mean']:.1f} | "
                     f"{s['long_p99']:.1f} | {s['thr_median']:.0f} "
                     f"({s['thr_min']}–{s['thr_max']}) |")
    return "\n".join(lines)


def write_csv(path, results):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scheme", "transport", "size", "start_s", "fct_us"])
        for r in results:
            for row in r.rows:
                w.writerow([r.name, r.transport["transport"], row["size"],
                            row["start_s"], row["fct_us"]])


def write_rows(path, rows):
    """Rows of dicts with the same keys as a CSV file with a header."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def timed(label, run):
    """run()'s result, after saying on stderr how long it took."""
    t0 = time.time()
    result = run()
    print(f"{label}: {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return result


def write_study(out, stem, rows, text):
    """A study's rows (OUT/STEM.csv) and report (OUT/STEM.md); prints the
    report."""
    write_rows(out / f"{stem}.csv", rows)
    (out / f"{stem}.md").write_text(text)
    print(text)

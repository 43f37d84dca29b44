"""eval/static_sweep.py's report without the switch: the best static
threshold is the one with the lowest pooled short mean, intervals hold
their means, p99 only with enough flows, and --report derives the same
report again from the CSV a run keeps."""

import random
import types

from eval import static_sweep
from testbed.micro import LONG, SHORT, write_rows


def fake_rows(seeds=3, shorts=40):
    """Short-flow FCTs whose mean is the scheme's 'level' (ms)."""
    level = {"fifo": 5.0, "static-5000": 4.0, "static-10000": 4.0,
             "static-11000": 1.0, "static-20000": 1.1, "static-100000": 1.2,
             "static-1000000": 5.0, "awafs-pct10": 1.05, "awafs-auto": 1.1}
    rng = random.Random(7)
    rows = []
    for seed in range(1, seeds + 1):
        for scheme, ms in level.items():
            rows += [{"scheme": scheme, "seed": seed, "size": SHORT,
                      "start_s": 10 * i / shorts,
                      "fct_ms": ms * rng.uniform(0.8, 1.2),
                      "carried_mbps": 80.0} for i in range(shorts)]
            rows += [{"scheme": scheme, "seed": seed, "size": LONG,
                      "start_s": i, "fct_ms": 200 * rng.uniform(0.9, 1.1),
                      "carried_mbps": 80.0} for i in range(10)]
    return rows


ARGS = types.SimpleNamespace(seeds=3, flows=50, load=80e6,
                             thresholds=static_sweep.THRESHOLDS)


def table(text):
    return {line.split(" | ")[0].strip("| ").replace(" (best)", ""):
            line.split(" | ") for line in text.splitlines()
            if line.startswith("| ") and "---" not in line
            and not line.startswith("| scheme")}


def test_best_static_and_intervals():
    text = static_sweep.report(fake_rows(), ARGS)
    assert "| static-11000 (best) |" in text
    rows = table(text)
    assert set(rows) == {n for n, _, _ in static_sweep.schemes(
        static_sweep.THRESHOLDS)}
    for cells in rows.values():
        mean = float(cells[2].split()[0])
        lo, hi = (float(v) for v in cells[2].split("[")[1].rstrip("]")
                  .split(", "))
        assert lo <= mean <= hi
    assert rows["static-11000"][4].startswith("+0.0 %")
    assert rows["static-11000"][5].startswith("+0.0 %")
    # 1.05 against 1.0: +5 % inside its interval.
    change, ci = rows["awafs-pct10"][4].split(" % ")
    lo, hi = (float(v) for v in ci.strip("[]").split(", "))
    assert lo < 5 < hi and abs(float(change) - 5) < 2
    # 120 short flows pooled: the maximum, not a p99.
    assert rows["fifo"][3].startswith("max ")


def test_p99_with_enough_flows():
    rows = table(static_sweep.report(fake_rows(seeds=3, shorts=400), ARGS))
    assert not rows["fifo"][3].startswith("max")


def test_report_again_from_the_kept_csv(tmp_path, capsys):
    rows = fake_rows()
    write_rows(tmp_path / "static-sweep.csv", rows)
    static_sweep.main(["--seeds", "3", "--flows", "50", "--report",
                       str(tmp_path / "static-sweep.csv")])
    assert capsys.readouterr().out == static_sweep.report(rows, ARGS)

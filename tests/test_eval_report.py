"""make eval's bookkeeping without the switch: a finished run is not run
again (eval/run.py), and the report is regenerated from the runs' CSVs
alone (eval/report.py)."""

import csv
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "eval"))

import report  # noqa: E402
import run  # noqa: E402


def write_run(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_finished_runs_are_skipped(tmp_path):
    runs = run.suite()
    assert len({key for _, key, _ in runs}) == len(runs)
    exp, key, _ = runs[3]
    write_run(tmp_path / "runs" / exp / f"{key}.csv",
              [{"size": 1, "fct_us": 1}])
    todo = run.pending(runs, tmp_path)
    assert len(todo) == len(runs) - 1 and runs[3] not in todo
    # An interrupted run leaves only its '.part' file: not finished.
    (tmp_path / "runs" / exp / f"{key}.csv").rename(
        tmp_path / "runs" / exp / f"{key}.part")
    assert len(run.pending(runs, tmp_path)) == len(runs)


def test_report_from_csvs(tmp_path):
    micro = [{"size": 10000, "start_s": i, "fct_us": 1000 + i}
             for i in range(8)] + [{"size": 1000000, "start_s": 9,
                                    "fct_us": 90000}]
    for scheme in ("fifo", "awafs-pct10"):
        write_run(tmp_path / "runs/micro" / f"load80-{scheme}.csv", micro)
    write_run(tmp_path / "runs/pias/cache-load50-awafs-refpct.csv", [
        {"id": 1, "size": 500, "fct_us": 2000, "slowdown": 2.0,
         "timeouts": 0},
        {"id": 2, "size": 200000, "fct_us": 40000, "slowdown": 3.0,
         "timeouts": 1}])
    report.main(["--out", str(tmp_path)])
    with open(tmp_path / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    short = [r for r in rows if r["run"] == "load80-fifo"
             and r["class"] == "short"][0]
    assert short["flows"] == "8"
    assert abs(float(short["mean_ms"]) - 1.0035) < 1e-9
    medium = [r for r in rows if r["workload"] == "cache"
              and r["class"] == "medium"][0]
    assert medium["timeout_flows"] == "1" and medium["flows"] == "1"
    text = (tmp_path / "report.md").read_text()
    assert "## Micro benchmark" in text and "awafs-refpct" in text
    assert "| cache | 50 | large |" not in text     # No flows: no row.
    assert (tmp_path / "micro.png").stat().st_size > 0

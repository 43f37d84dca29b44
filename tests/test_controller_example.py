"""The README's controller example with traffic (issue 34): the example
switch as the README starts it, `python -m testbed.switch_server
--traffic` (on free ports), the real controller, and the dashboard in
headless Chromium, asserting on what the page shows once traffic flows:
thresholds that moved with the workloads, queue byte counters that grew,
drops, completions per second and the window's size histogram, each chart
with its axes' ticks and titles."""

import os
import re
import signal
import subprocess
import sys

from tests.conftest import REPO
from tests.test_controller import ARTEFACTS, SETTLE, Controller, browser
from testbed import switch_server
from testbed.controller import free_port
from testbed.switch import wait_until

DPID = switch_server.DPID
# The learned thresholds follow a workload within a window and an
# interval of it; both workloads have been seen after two phases.
WINDOW_S = (switch_server.TRAFFIC_QOS["window-ms"]
            + switch_server.TRAFFIC_QOS["interval-ms"]) / 1000
BOTH_WORKLOADS = 2 * switch_server.PHASE + WINDOW_S + SETTLE
# The workloads' sizes differ 20- to 100-fold: so do their thresholds.
MOVED = 4
TIME_CHARTS = {"thresholds": "threshold (bytes)", "queue-bytes": "bytes/s",
               "queue-drops": "packets/s", "completions": "flows/s"}

# What the port's section shows, read in one go (the page redraws it every
# second).
SNAPSHOT = """
const sec = document.querySelector(
  `section[data-switch="${arguments[0]}"][data-port="dpdk0"]`);
if (!sec) return null;
const texts = (root, sel) => [...root.querySelectorAll(sel)]
  .map(e => e.textContent);
return {
  thresholds: sec.querySelector("span.thresholds").textContent,
  charts: Object.fromEntries([...sec.querySelectorAll("figure.chart")]
    .map(f => [f.dataset.chart, {
      x_title: texts(f, ".axis.x .axis-title"),
      y_title: texts(f, ".axis.y .axis-title"),
      x_ticks: texts(f, ".axis.x .tick"),
      y_ticks: texts(f, ".axis.y .tick"),
      legend: texts(f, ".legend .value"),
      lines: Object.fromEntries([...f.querySelectorAll("polyline.series")]
        .map(p => [p.dataset.label, p.getAttribute("points")])),
      bars: [...f.querySelectorAll("rect.bar")]
        .map(r => [Number(r.dataset.count), r.textContent]),
    }])),
  queues: [...sec.querySelectorAll("tr.queue")].map(tr => Object.fromEntries(
    [...tr.cells].map(td => [td.className, td.textContent]))),
};
"""


def start_example_switch(ofp_port, ovsdb_port, log):
    """switch_server --traffic, its output in 'log'; returns the process
    once it sends (it prints the traffic line then)."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "testbed.switch_server", "--traffic",
             "--controller", f"tcp:127.0.0.1:{ofp_port}",
             "--ovsdb", f"ptcp:{ovsdb_port}:127.0.0.1"],
            cwd=REPO, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, AWAFS_TEST_LOCK_HELD="1"))
    # The sandbox's own bounds: DPDK initialises within 60 s.
    if not wait_until(lambda: proc.poll() is not None
                      or "traffic:" in log.read_text(), 90, step=0.2) \
            or proc.poll() is not None:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"switch_server: {log.read_text()}")
    return proc


def number(text):
    """The first number in 'text' ("248 flows/s" -> 248.0)."""
    return float(re.search(r"[\d.]+", text.replace(",", "")).group())


def line_levels(points):
    """The distinct heights a polyline's points are drawn at."""
    return {round(float(p.split(",")[1]), 1) for p in points.split()}


def test_dashboard_shows_the_example_switch_traffic():
    ofp_port, ovsdb_port = free_port(), free_port()
    log = ARTEFACTS / "switch_server.log"
    server = start_example_switch(ofp_port, ovsdb_port, log)
    ctl = driver = None
    try:
        ctl = Controller(ofp_port, {DPID: f"tcp:127.0.0.1:{ovsdb_port}"},
                         "native")
        ctl.start()
        driver = browser(height=1700)
        driver.get(f"http://{ctl.rest}/")

        def snapshot():
            return driver.execute_script(SNAPSHOT, DPID)

        def showing_traffic():
            s = snapshot()
            return s if s and s["charts"] and "not polled" not in \
                s["thresholds"] and s["charts"]["completions"]["lines"] \
                else None
        assert wait_until(showing_traffic, 2 * SETTLE), snapshot()
        first = showing_traffic()

        # The thresholds as the page writes them, until both workloads'
        # are among them.
        seen = set()

        def moved():
            s = snapshot()
            if s and "," in s["thresholds"]:
                seen.add(int(s["thresholds"].split(",")[0]))
            return len(seen) > 1 and max(seen) >= MOVED * max(1, min(seen))
        assert wait_until(moved, BOTH_WORKLOADS, step=0.5), seen
        last = snapshot()
        driver.save_screenshot(str(ARTEFACTS / "dashboard-traffic.png"))

        charts = last["charts"]
        assert set(charts) == set(TIME_CHARTS) | {"histogram"}
        # The chart draws the moves: threshold 1 at several heights.
        thresholds = charts["thresholds"]
        assert sorted(thresholds["lines"]) == ["threshold 1", "threshold 2",
                                               "threshold 3"]
        assert len(line_levels(thresholds["lines"]["threshold 1"])) >= 2
        # Each queue's bytes grew; something was sent and dropped per second.
        def column(snap, name):
            return [int(q[name]) for q in snap["queues"]]
        assert len(column(last, "tx-bytes")) == 4
        assert sum(column(last, "tx-bytes")) > sum(column(first, "tx-bytes"))
        assert sum(column(last, "dropped-packets")) > 0
        assert any(number(v) > 0 for v in charts["queue-bytes"]["legend"])
        assert sorted(charts["queue-drops"]["lines"]) == [
            f"queue {q}" for q in range(4)]
        assert number(charts["completions"]["legend"][0]) > 0
        # The window's sizes: bars, some not empty, each saying its range.
        bars = charts["histogram"]["bars"]
        assert bars and any(n > 0 for n, _ in bars)
        assert all(re.fullmatch(r"\S+ \S*B to \S+ \S*B: \d+ flows", title)
                   for _, title in bars), bars
        # Axes: ticks with labels, titles with units.
        for name, chart in charts.items():
            assert len(chart["x_ticks"]) >= 2, name
            assert len(chart["y_ticks"]) >= 2, name
            assert all(chart["x_ticks"] + chart["y_ticks"]), name
        for name, unit in TIME_CHARTS.items():
            assert charts[name]["x_title"] == ["time (h:m:s)"]
            assert charts[name]["y_title"] == [unit]
            assert all(re.fullmatch(r"\d\d:\d\d:\d\d", t)
                       for t in charts[name]["x_ticks"]), name
        assert charts["histogram"]["x_title"] == [
            "flow size (bytes, powers of 2)"]
        assert charts["histogram"]["y_title"] == ["flows"]
        assert all(t.endswith("B") for t in charts["thresholds"]["y_ticks"])
    finally:
        if driver:
            driver.quit()
        if ctl and ctl.proc:
            ctl.stop()
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    # It stopped the sandbox cleanly: no unexpected error in the log.
    assert server.returncode == 0, log.read_text()

"""make eval's bookkeeping without the switch: a finished run is not run
again (eval/run.py), and the report is regenerated from the runs' files
alone (eval/report.py)."""

import argparse
import csv
import re

import pytest

from eval import kept, probe, report, run

PORTS = {"p0": {"dropped": 3, "ecn_marks": 40}}


def write_run(out, exp, key, params, rows, thresholds=None, ports=PORTS):
    path = out / "runs" / exp / f"{key}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    run.write(path, params, rows,
              thresholds or {"p0": [(0.5, [1000000]), (1.0, [10304])]},
              ports)


def flow(i, size, fct_us, **extra):
    return {"id": i, "size": size, "start_s": i / 10, "fct_us": fct_us,
            "slowdown": 2.0, "timeouts": 0, **extra}


def test_every_experiment_is_in_the_suite_once():
    runs = run.suite()
    assert len({key for _, key, _ in runs}) == len(runs)
    assert {exp for exp, _, _ in runs} == {"micro", "shift", "pias",
                                           "hetero", "tardy", "karuna"}
    loads = {p["load"] for exp, _, p in runs if exp == "micro"}
    assert loads == {0.5, 0.6, 0.7, 0.8, 0.9}
    shift = [p for exp, _, p in runs if exp == "shift"]
    assert sorted({p["queues"] for p in shift}) == [2, 3, 4]
    assert all([w for w, _ in p["phases"]] == ["datamining", "websearch"]
               for p in shift)
    # The thesis's §5.4 parameters: InitThr 7 kB, 14 kB, ...; RefPct 10, 20.
    q3 = run.shift_scheme(3, "adaptive")
    assert q3["thresholds"] == "7000,14000" and q3["percentiles"] == "10,20"
    # TFS needs the switch's count; loss comes from a shallow buffer.
    tardy = [p for exp, _, p in runs if exp == "tardy"]
    assert {p["scheme"] for p in tardy} == {"off", "tfs", "tfs+"}
    assert {p["load"] for p in tardy} == {0.1, 0.3, 0.5, 0.7, 0.9}
    assert all(p["qos"]["trust"] == "switch" and p["transport"] == "cubic"
               and p["qos"]["buffer"] == run.TARDY_BUFFER for p in tardy)
    # Karuna: a third of the flows of each type; the two baselines and
    # Karuna with 8 queues; aging with the switch's count.
    karuna = [p for exp, _, p in runs if exp == "karuna"]
    assert all(p["karuna"] == run.KARUNA_SENDERS for p in karuna)
    assert {p["scheme"] for p in karuna} == {
        "dctcp-only", "deadline-on-top", "karuna-static", "karuna-adaptive",
        "karuna-mcp", "karuna-aging-off", "karuna-aging-on"}
    assert {p.get("transport", "dctcp") for p in karuna} == {"dctcp", "mcp"}
    for p in karuna:
        if p["scheme"].startswith("karuna"):
            q = p["qos"]
            assert q["queues"] == 8 and q["karuna"] == "on"
            assert len(q["thresholds"].split(",")) == 6
            assert len(q["size-thresholds"].split(",")) == 6
    aging = [p for p in karuna if "aging" in p["qos"]]
    assert sorted(p["qos"]["aging"] for p in aging) == ["off", "on"]
    assert all(p["qos"]["trust"] == "switch"
               and p["phases"][0][0] == "longflow" for p in aging)


def test_finished_runs_are_skipped(tmp_path):
    runs = run.suite()
    exp, key, params = runs[3]
    write_run(tmp_path, exp, key, params, [flow(1, 10000, 1000)])
    todo = run.pending(runs, tmp_path)
    assert len(todo) == len(runs) - 1 and runs[3] not in todo
    # An interrupted run leaves only its '.part' file: not finished.
    (tmp_path / "runs" / exp / f"{key}.csv").rename(
        tmp_path / "runs" / exp / f"{key}.part")
    assert len(run.pending(runs, tmp_path)) == len(runs)


def test_seeds_run_under_their_own_names():
    """--seeds N: every run N times, seed 1 under its own name (the runs
    kept before seeds existed stay valid), seed S under NAME-seedS."""
    runs = run.with_seeds(run.suite()[:2], 3)
    assert [(key, p["seed"]) for _, key, p in runs][:3] == [
        (run.suite()[0][1], 1), (f"{run.suite()[0][1]}-seed2", 2),
        (f"{run.suite()[0][1]}-seed3", 3)]
    assert len(runs) == 6


def test_pias_runs_the_matched_thresholds_and_a_static_sweep():
    """Every workload and load of the pias experiment runs PIAS's thresholds
    for that workload (PIAS-NS2's for web search and data mining, its
    objective's for Hadoop and cache) and the CDF's 10th..70th percentiles
    fixed, halved and doubled: the best static thresholds in hindsight."""
    runs = [p for exp, _, p in run.suite()
            if exp == "pias" and not p.get("per_flow")]
    for workload in run.WORKLOADS:
        for load in run.PIAS_LOADS:
            here = {p["scheme"]: p["qos"] for p in runs
                    if p["workload"] == workload and p["load"] == load}
            assert {f"pias-{workload}", "static-refpct-x0.5",
                    "static-refpct", "static-refpct-x2"} <= set(here)
            for scheme, qos in here.items():
                if qos["mode"] == "static":
                    thr = [int(t) for t in qos["thresholds"].split(",")]
                    assert len(thr) == 7 and thr == sorted(thr), scheme
            half, one, two = (
                [int(t) for t in here[s]["thresholds"].split(",")]
                for s in ("static-refpct-x0.5", "static-refpct",
                          "static-refpct-x2"))
            assert all(abs(2 * h - o) <= 1 and abs(2 * o - t) <= 1
                       for h, o, t in zip(half, one, two))
    # The objective's are the same CDF positions for every workload.
    hadoop = run.pias_matched("hadoop", 0.8)
    assert hadoop == run.pias_objective_thresholds("hadoop", 0.8)
    assert hadoop != run.pias_objective_thresholds("cache", 0.8)
    assert run.pias_matched("websearch", 0.8) == \
        run.pias_thresholds("websearch", 0.8)[0]


def test_seeds_are_pooled_with_an_interval(tmp_path):
    """A run kept with two seeds: its short flows pooled, their mean with
    a bootstrap interval that holds it, against PIAS mismatched and the best
    static scheme there, and the load it carried; a run with one seed is not
    in the section."""
    static = {"mode": "static"}
    # fifo's port sent 1,000 frames of 1,476 bytes in 1 s: with 24 bytes of
    # wire overhead each, 12 Mbit/s, 80 % of its 15 Mbit/s.
    carried = {"p0": {**PORTS["p0"], "sent": 1000, "sent_bytes": 1476000,
                      "seconds": 1.0, "details": {"max-rate": "15000000"}}}
    for key, fcts, qos in (
            ("cache-load50-fifo", (1000, 3000), {}),
            ("cache-load50-fifo-seed2", (2000, 6000), {}),
            ("cache-load50-pias-datamining", (2000, 6000), static),
            ("cache-load50-pias-datamining-seed2", (4000, 12000), static),
            ("cache-load50-static-refpct", (500, 1500), static),
            ("cache-load50-static-refpct-seed2", (1000, 3000), static),
            ("cache-load80-fifo", (1000, 1000), {})):
        write_run(tmp_path, "pias", key,
                  {"workload": "cache", "load": 0.5, "scheme": "fifo",
                   "qos": qos},
                  [flow(1, 5000, fcts[0], dsacks=0),
                   flow(2, 90000, fcts[1], timeouts=1, dsacks=1),
                   flow(3, 2000000, 50000, dsacks=0)],
                  ports=carried if "fifo" in key else PORTS)
    # On the leaf-spine, against PIAS's web-search thresholds.
    for key, fct in (("load50-awafs-refpct", 1000),
                     ("load50-awafs-refpct-seed2", 1000),
                     ("load50-pias-websearch", 4000),
                     ("load50-pias-websearch-seed2", 4000)):
        write_run(tmp_path, "hetero", key,
                  {"load": 0.5, "scheme": key.split("-seed")[0][7:]},
                  [flow(1, 5000, fct, workload="websearch")])
    report.main(["--out", str(tmp_path)])
    text = (tmp_path / "report.md").read_text()
    section = text.split("## Seeds pooled")[1]
    assert "| hetero | load50-awafs-refpct | 2 | 2 | 1.000 | 1.000-1.000 " \
        "| max 1.00 | -75.0 % [-75.0, -75.0] | - |" in section

    def cells(run_name):
        row = next(line for line in section.splitlines()
                   if line.startswith(f"| pias | {run_name} |"))
        return [c.strip() for c in row.strip("|").split("|")]

    fifo = cells("cache-load50-fifo")
    # 2 seeds, 4 short flows: (1 + 3 + 2 + 6) / 4 ms; 2 timeouts, both
    # spurious; PORTS' 3 drops a run.
    assert fifo[2:5] == ["2", "4", "3.000"]
    lo, hi = map(float, fifo[5].split("-"))
    assert lo <= 3.0 <= hi
    assert fifo[6] == "max 6.00" and fifo[10:] == ["2", "2", "6", "80 %"]
    assert cells("cache-load50-static-refpct")[13] == "-"   # Not recorded.
    assert fifo[9] == "-"       # No flow started after the start-up.
    # Against cache's mismatched PIAS (data mining's), whose flows took
    # twice as long: -50 %; against the best static, the sweep's, which
    # took half as long: +100 %; each inside its interval.
    for cell, pct in ((fifo[7], -50), (fifo[8], 100)):
        m = re.fullmatch(r"([+-][\d.]+) % \[([+-][\d.]+), ([+-][\d.]+)\]",
                         cell)
        assert m and float(m[1]) == pct, cell
        assert float(m[2]) <= pct <= float(m[3]), cell
    assert cells("cache-load50-pias-datamining")[2:5] == ["2", "4", "6.000"]
    assert cells("cache-load50-pias-datamining")[7] == "(the reference)"
    assert cells("cache-load50-pias-datamining")[8].startswith("+300.0 %")
    assert cells("cache-load50-static-refpct")[8] == "(the best static)"
    assert "cache-load80-fifo |" not in section
    # In more detail: fifo's four short flows took 1, 2, 3 and 6 ms
    # (nearest rank), those of 5 kB 1 and 2 ms, those of 90 kB 3 and 6.
    assert "| pias | cache-load50-fifo | 3.00 | 6.00 | 6.00 | - | 1.50 | " \
        "4.50 |" in section
    # Every flow: fifo's six (1, 3, 50; 2, 6, 50 ms) against the best
    # static's (0.5, 1.5, 50; 1, 3, 50 ms): 18.67 against 17.67 ms, +5.7 %;
    # the 2 MB flows took 50 ms; the hetero runs are not in it.
    every = section.split("Every flow of the pias experiment")[1]
    row = next(line for line in every.splitlines()
               if line.startswith("| cache-load50-fifo |"))
    m = re.fullmatch(r"\| cache-load50-fifo \| 6 \| 18\.67 \| \+5\.7 % "
                     r"\[([+-][\d.]+), ([+-][\d.]+)\] \| - \| 50\.0 \| - \|",
                     row)
    assert m and float(m[1]) <= 5.7 <= float(m[2]), row
    assert "| cache-load50-static-refpct | 6 | 17.67 | (the best static) |" \
        in every
    assert "load50-awafs-refpct" not in every


def test_learning_schemes_are_compared_after_their_start_up(tmp_path):
    """Beside the change against the best static over all short flows, the
    same over those that started report.SETTLED_S or more into the run: a
    learning scheme that lost only while it started is even there."""
    late = report.SETTLED_S + 1
    for scheme, mode, early_fct in (("static-refpct", "static", 1000),
                                    ("awafs-auto", "adaptive", 5000)):
        for key in (f"cache-load80-{scheme}", f"cache-load80-{scheme}-seed2"):
            write_run(tmp_path, "pias", key,
                      {"workload": "cache", "load": 0.8, "scheme": scheme,
                       "qos": {"mode": mode}},
                      [flow(1, 5000, early_fct),
                       {**flow(2, 5000, 2000), "start_s": late}])
    report.main(["--out", str(tmp_path)])
    section = (tmp_path / "report.md").read_text().split(
        "## Seeds pooled")[1]
    row = next(line for line in section.splitlines()
               if line.startswith("| pias | cache-load80-awafs-auto |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # All: (5 + 2) / (1 + 2) ms; from SETTLED_S on, the same flow.
    assert cells[8].startswith("+133.3 % ["), cells
    assert cells[9] == "+0.0 % [+0.0, +0.0]", cells


def test_report_from_the_runs_files(tmp_path):
    micro = [flow(i, 10000, 1000 + i) for i in range(8)] + \
        [flow(9, 1000000, 90000)]
    for scheme in ("fifo", "awafs-pct10"):
        write_run(tmp_path, "micro", f"dctcp-load80-{scheme}",
                  {"transport": "dctcp", "load": 0.8, "scheme": scheme},
                  micro)
    write_run(tmp_path, "pias", "cache-load50-awafs-refpct",
              {"workload": "cache", "load": 0.5, "scheme": "awafs-refpct"},
              [flow(1, 500, 2000), flow(2, 200000, 40000, timeouts=1)])
    # A run whose servers logged duplicate SACKs: of the three small flows
    # with a timeout, the two whose server then got a DSACK were spurious;
    # a DSACK without a timeout (a needless fast retransmit) is not one.
    write_run(tmp_path, "pias", "cache-load80-awafs-refpct",
              {"workload": "cache", "load": 0.8, "scheme": "awafs-refpct"},
              [flow(1, 500, 2000, timeouts=1, dsacks=1),
               flow(2, 900, 2000, timeouts=2, dsacks=3),
               flow(3, 700, 2000, timeouts=1, dsacks=0),
               flow(4, 800, 2000, timeouts=0, dsacks=1)])
    write_run(tmp_path, "shift", "q2-adaptive",
              {"queues": 2, "load": 0.8, "scheme": "awafs",
               "phases": [["datamining", 2], ["websearch", 1]]},
              [flow(1, 1460, 1000, phase=0), flow(2, 5000, 3000, phase=0),
               flow(3, 50000, 8000, phase=1)])
    write_run(tmp_path, "hetero", "load50-awafs-refpct",
              {"load": 0.5, "scheme": "awafs-refpct"},
              [flow(1, 2000, 1000, workload="websearch"),
               flow(2, 3000, 5000, workload="datamining")],
              {"leaf1-eth1": [(1.0, [7000, 9000])]},
              {"leaf1-eth1": {"dropped": 0, "ecn_marks": 5}})
    # Tardy flows: the bytes their server sent again (here a tail loss
    # probe, not counted as a retransmission) tell them apart; 1 of 4
    # flows lost a packet under AWAFS alone (w = 0.25); the 1 MB flow is
    # not short.  Under TFS flow 2 lost one instead, and flow 1 stays the
    # tardy class: the same flows in every scheme.
    for scheme, tardy_fct in (("off", 8000), ("tfs", 4000)):
        write_run(tmp_path, "tardy", f"cache-load50-{scheme}",
                  {"workload": "cache", "load": 0.5, "scheme": scheme,
                   "transport": "cubic"},
                  [flow(1, 5000, tardy_fct, retransmits=0,
                        resent_bytes=1448 if scheme == "off" else 0),
                   flow(2, 5000, 1000, retransmits=0,
                        resent_bytes=0 if scheme == "off" else 1448),
                   flow(3, 7000, 3000, retransmits=0),
                   flow(4, 1000000, 90000, retransmits=0)])
    # Karuna: one deadline flow meets its deadline (100 kB: 33 ms at
    # 25 Mbit/s), one misses it (1 kB: the 10 ms floor).
    deadline = run.KARUNA_DEADLINE
    for scheme, fct2 in (("dctcp-only", 8000), ("karuna-static", 2000)):
        write_run(tmp_path, "karuna", f"websearch-load80-{scheme}",
                  {"workload": "websearch", "load": 0.8, "scheme": scheme},
                  [flow(1, 100000, 30000, karuna=deadline),
                   flow(2, 1000, 15000, karuna=deadline),
                   flow(3, 5000, fct2, karuna="size"),
                   flow(4, 5000, 4000, karuna="")])
    report.main(["--out", str(tmp_path)])
    with open(tmp_path / "summary.csv") as f:
        rows = list(csv.DictReader(f))

    def one(**match):
        found = [r for r in rows if all(r[k] == v for k, v in match.items())]
        assert len(found) == 1, (match, found)
        return found[0]

    short = one(run="dctcp-load80-fifo", **{"class": "short"})
    assert short["flows"] == "8" and short["dropped"] == "3"
    assert abs(float(short["mean_ms"]) - 1.0035) < 1e-9
    medium = one(workload="cache", load="50", **{"class": "medium"})
    assert medium["timeout_flows"] == "1" and medium["flows"] == "1"
    assert medium["spurious_timeout_flows"] == ""   # No DSACKs logged.
    small = one(workload="cache", load="80", **{"class": "small"})
    assert small["timeout_flows"] == "3"
    assert small["spurious_timeout_flows"] == "2"
    # The shift's flows are split by phase, each with its workload.
    before = one(experiment="shift", phase="0", **{"class": "small"})
    assert before["workload"] == "datamining" and before["flows"] == "2"
    assert one(experiment="shift", phase="1",
               **{"class": "small"})["workload"] == "websearch"
    # Heterogeneous runs: every flow, and each pair workload apart.
    assert one(experiment="hetero", workload="mixed",
               **{"class": "all"})["flows"] == "2"
    assert one(experiment="hetero", workload="datamining",
               **{"class": "all"})["mean_ms"] == "5.0"
    tardy = one(run="cache-load50-off", **{"class": "short-tardy"})
    assert tardy["flows"] == "1" and tardy["mean_ms"] == "8.0"
    assert float(tardy["tardy_share"]) == 0.25
    assert one(run="cache-load50-tfs",
               **{"class": "short-normal"})["mean_ms"] == "2.0"
    assert one(run="cache-load50-tfs",
               **{"class": "short-tardy"})["mean_ms"] == "4.0"
    t1 = one(run="websearch-load80-karuna-static", **{"class": "type1"})
    assert t1["flows"] == "2" and float(t1["miss_pct"]) == 50.0
    assert one(run="websearch-load80-karuna-static",
               **{"class": "type2"})["mean_ms"] == "2.0"
    text = (tmp_path / "report.md").read_text()
    assert ("| 80 | karuna-static | 50.0 % | dctcp-only (50.0 %) | -75 % | "
            "-75 % | +0 % | +0 % |") in text
    # Measured 8 ms / 4 ms; the model at load 0.5 and w = 0.25.
    model = report.tfs_model.factors(
        report.load_cdf(report.workloads_dir() / "cache.cdf"), 0.5, 0.25,
        report.TARDY_SHORT)
    assert (f"| cache | 50 | 0.250 | 2.00 / {model['tfs', 'tardy']:.2f} | "
            f"1.00 / {model['tfs', 'normal']:.2f} |") in text
    for heading in ("## Micro benchmark", "## Workload shift",
                    "## AWAFS and PIAS", "## Heterogeneous traffic",
                    "## Tardy flows", "## Karuna's mix-flows"):
        assert heading in text
    assert "| load50-awafs-refpct | leaf1-eth1 | 7000, 9000 |" in text
    assert "| cache | 50 | large |" not in text     # No flows: no row.
    for png in ("micro.png", "micro-threshold.png", "shift.png",
                "pias-slowdown.png"):
        assert (tmp_path / png).stat().st_size > 0
    assert "![slowdown by flow size](pias-slowdown.png)" in text
    # The shift's web search starts at 0.3 s of flows (0.8 s of samples):
    # 10,304 B, sampled at 1.0 s, is the run's last set.
    assert "| awafs-q2 | 1 | 1 | 0.2 | 0.2-0.2 |" in text


def test_karuna_seeds_are_pooled(tmp_path):
    """Karuna's runs with several seeds pooled as sim/ns3_karuna.py pools
    ns-3's: the miss rate and each type's mean, with intervals, and the
    change against deadline-on-top; a point with one seed is left out."""
    deadline = run.KARUNA_DEADLINE
    for scheme, fct2 in (("deadline-on-top", 8000), ("karuna-mcp", 2000)):
        for seed in (1, 2):
            key = f"websearch-load80-{scheme}" + (f"-seed{seed}"
                                                  if seed > 1 else "")
            write_run(tmp_path, "karuna", key,
                      {"workload": "websearch", "load": 0.8,
                       "scheme": scheme, "seed": seed},
                      [flow(1, 100000, 30000, karuna=deadline),
                       flow(2, 1000, 15000, karuna=deadline),
                       flow(3, 5000, fct2, karuna="size"),
                       flow(4, 5000, 4000, karuna="")])
    write_run(tmp_path, "karuna", "websearch-load50-karuna-mcp",
              {"workload": "websearch", "load": 0.5, "scheme": "karuna-mcp"},
              [flow(1, 5000, 2000, karuna="size")])
    report.main(["--out", str(tmp_path)])
    text = (tmp_path / "report.md").read_text()
    section = text[text.index("## Karuna pooled over seeds"):]
    assert "websearch at 80 %:" in section
    assert "websearch at 50 %" not in section
    # Of 4 deadline flows over the two seeds, the two of 1 kB missed.
    assert re.search(r"\| karuna-mcp \| 2 \| 4 \| 50\.00 \[[\d.]+, "
                     r"[\d.]+\] \| 2\.00 \[2\.00, 2\.00\] \| "
                     r"4\.00 \[4\.00, 4\.00\] \| 4\.00 \[4\.00, "
                     r"4\.00\] \|", section), section
    assert re.search(r"\| karuna-mcp \| -75\.0 % \[-75\.0, -75\.0\] \| "
                     r"\+0\.0 % \[\+0\.0, \+0\.0\] \| \+0\.0 % "
                     r"\[\+0\.0, \+0\.0\] \| -50\.0 % \[", section), section


def test_following_a_shift():
    """The first thresholds after the shift within a factor of 2 of the
    last ones, each of them; none if they never come near before."""
    series = [(1.0, [7000, 14000]), (2.0, [90000, 14000]),
              (3.0, [90000, 300000]), (4.0, [100000, 200000])]
    assert report.follow_s(series, 1.5) == 1.5
    assert report.follow_s(series, 3.5) == 0.5
    assert report.follow_s(series[:2], 5.0) is None


def test_slowdown_by_flow_size():
    """The mean slowdown of each size bucket's flows; a bucket without
    flows has none."""
    rows = [{"size": 500, "slowdown": 3.0}, {"size": 1000, "slowdown": 5.0},
            {"size": 1001, "slowdown": 2.0},
            {"size": 100_000, "slowdown": 7.0},
            {"size": 20_000_000, "slowdown": 1.5}]
    assert report.slowdown_by_size(rows) == [4.0, 2.0, 7.0, None, None, 1.5]


def test_probe_schemes_are_the_pias_window_with_keys_on_top():
    """eval.probe: NAME=KEY:VALUE;... is a pias scheme (its window, 8
    queues) with those keys; values keep their commas."""
    name, qos = probe.scheme("frozen=mode:adaptive;thresholds:350,1448;"
                             "min-samples:32768")
    assert name == "frozen"
    assert qos == {**run.WORKLOAD_WINDOW, "queues": 8, "mode": "adaptive",
                   "thresholds": "350,1448", "min-samples": "32768"}
    with pytest.raises(argparse.ArgumentTypeError):
        probe.scheme("bad=mode")


def test_kept_runs_derive_their_sections_again(tmp_path):
    """eval/kept.py: a folder's runs packed twice are the same bytes; its
    seeds.md gets the report's "Seeds pooled" section under the header it
    keeps, and the check fails once that section no longer matches the
    runs."""
    for key, fct in (("load50-awafs-refpct", 1000),
                     ("load50-awafs-refpct-seed2", 1000)):
        write_run(tmp_path / "out", "hetero", key,
                  {"load": 0.5, "scheme": "awafs-refpct"},
                  [flow(1, 5000, fct, workload="websearch")])
    folder = tmp_path / "kept"
    kept.pack(folder, tmp_path / "out")
    first = (folder / "runs.tar.gz").read_bytes()
    kept.pack(folder, tmp_path / "out")
    assert (folder / "runs.tar.gz").read_bytes() == first
    (folder / "seeds.md").write_text("# Kept\n\nThe commands.\n\n"
                                     "## Seeds pooled\n\nold\n")
    assert kept.derive(folder) == ["Seeds pooled"]
    text = (folder / "seeds.md").read_text()
    assert text.startswith("# Kept\n\nThe commands.\n\n## Seeds pooled\n")
    assert "| hetero | load50-awafs-refpct | 2 | 2 | 1.000 |" in text
    assert kept.derive(folder, check=True) == []
    (folder / "seeds.md").write_text(text.replace("| 2 | 2 |", "| 2 | 3 |"))
    assert kept.derive(folder, check=True) == ["Seeds pooled"]

"""Helpers for the end-host tests: the host agent's CLI and counters, the
test application, and what the switch learned."""

import subprocess

from tests.conftest import BIN, REPO
from testbed.switch import wait_until

APP = str(REPO / "testbed" / "tcp_app.py")
AGENT = str(BIN / "awafs-host")
# The percentiles of an exact-window 8-queue awafs: its 7 thresholds are
# these percentiles of every completion the switch recorded.
PCTS = [1, 10, 25, 50, 75, 90, 99]


def nearest_rank(values, pct):
    s = sorted(values)
    return s[max(-(-pct * len(s) // 100), 1) - 1]


def agent(*args, check=True):
    proc = subprocess.run([AGENT, *args], capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def counters(cgroup):
    """The agent's counters: the first line of 'status'."""
    out = agent("status", "--cgroup", str(cgroup.path)).stdout
    return {k: int(v) for k, v in
            (kv.split("=") for kv in out.splitlines()[0].split()[2:])}


def transfer(hosts, sizes, per_message=False, gap_ms=5, cgroup=None,
             md5=False, extra=()):
    """Sends 'sizes' from h1 to h2 with testbed/tcp_app.py; returns the
    bytes h2 received."""
    n_conns = len(sizes) if per_message else 1
    srv = hosts.h2.popen("python3", APP, "server", "5001", str(n_conns),
                         *(["--md5", hosts.h1.addr] if md5 else []),
                         stdout=subprocess.PIPE, text=True)
    # Connect once it listens.
    assert wait_until(lambda: hosts.h2.run("ss", "-Hltn",
                                           "sport = :5001").stdout, 10)
    args = ["python3", APP, "client", hosts.h2.addr, "5001",
            ",".join(map(str, sizes)), "--gap-ms", str(gap_ms), *extra]
    args += ["--per-message"] if per_message else []
    args += ["--md5"] if md5 else []
    client = hosts.h1.run(*args, cgroup=cgroup, timeout=120, check=False)
    assert client.returncode == 0, client.stderr
    out, _ = srv.communicate(timeout=60)
    return int(out)


def learned(sb, port="p2"):
    """(qos/show details, thresholds) after two more recalculation rounds
    (the first may have begun before the last completion): by the switch's
    thresholds-version, which moves only with samples in the window, so a
    window without any is waited for at most 5 s."""
    def version():
        return int(sb.qos_show(port)[1]["thresholds-version"])

    start = version()
    wait_until(lambda: version() >= start + 2, 5)
    _, details, _ = sb.qos_show(port)
    return details, [int(v) for v in details["current-thresholds"].split(",")]


def assert_learned_exactly(sb, sizes):
    """The switch counted one completion per message in 'sizes', of exactly
    that size: its exact-window thresholds are their percentiles."""
    details, thr = learned(sb)
    assert int(details["completions"]) == len(sizes), details
    assert thr == [nearest_rank(sizes, p) for p in PCTS], (thr, sorted(sizes))
    assert details["malformed"] == "0"

"""MCP, Karuna's deadline congestion control (issue 17), on real TCP: the
senders' cgroup runs awafs_mcp (host-agent/awafs_dctcp.bpf.c) and the
flowgen servers mark their responses as Karuna-aware applications do (n1: a
deadline of 1.5 s, n2: a deadline of 100 ms, n3: nothing).  A deadline flow
takes just the rate that meets its deadline, so a flow without one that
starts with it gets the rest and finishes first; a deadline that can no
longer be met is given up, and the switch schedules the rest of that flow
as one of known size."""

import re

import pytest

from testbed.flowbench import PORT, FlowBench, base_rtt_us, client_argv
from testbed.senderbed import ECN_THRESHOLD, AWAFS_PORT, agent, run_clients


RATE = 20000000
MB = 1000000
DEADLINE_S = 1.5                # n1's deadline (FlowBench's karuna below)
ALONE_S = MB * 8 / RATE         # 1 MB at the line rate: 0.4 s
# Queue 0: deadlines; 1: unknown sizes (the sieve's thresholds are past
# every flow); 3: known sizes (past both size thresholds).  ECN for DCTCP,
# MCP's network term.
QOS = {"queues": 4, "karuna": "on", "mode": "static",
       "thresholds": "100000000,200000000", "size-thresholds": "1000,2000",
       "max-rate": RATE, "ecn-threshold": ECN_THRESHOLD}


@pytest.fixture(scope="module", params=["mcp", "dctcp"])
def bench(request):
    """The senders with awafs_mcp, or with awafs_dctcp for comparison."""
    b = FlowBench(transport=request.param,
                  karuna=["deadline:1500", "deadline:100", None])
    yield b
    b.close()


@pytest.fixture
def mcp_bench(bench):
    if bench.transport != "mcp":
        pytest.skip("MCP only")
    return bench


def mcp_stats():
    out = agent("dctcp", "status").stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("awafs_mcp:"))
    return {k: int(v) for k, v in re.findall(r"([a-z-]+)=(\d+)", line)}


def flows(bench, tmp_path, senders):
    """One 1 MB flow from each of 'senders', all at once (a client each);
    returns each flow's completion time (s) and the port's stats."""
    size = tmp_path / "1MB.cdf"
    size.write_text(f"{MB} 0\n{MB} 1\n")
    n0 = bench.receiver
    base = base_rtt_us(n0, [f"{h.addr}:{PORT}" for h in bench.senders])
    clients = []
    for i, h in enumerate(senders):
        out = bench.www / f"mcp-{i}.csv"
        clients.append((n0, client_argv([f"{h.addr}:{PORT}"], [(size, 1)],
                                        1e12, RATE, base, out,
                                        first_id=1000 * (i + 1),
                                        per_flow=True), out))
    # The run fails unless the servers' connections run awafs_mcp (or
    # awafs_dctcp) and the client's awafs_dctcp.
    rows, _, stats = run_clients(bench.sb, {AWAFS_PORT: QOS}, clients, 0.5,
                                 bench.proof())
    return [float(r["fct_us"]) / 1e6 for (r,) in rows], stats[AWAFS_PORT]


def test_a_deadline_flow_leaves_the_rest_to_others(bench, tmp_path):
    """n1's 1 MB with a 1.5 s deadline and n3's 1 MB without one, at once,
    at 20 Mbit/s (0.46 s each alone).  With awafs_dctcp the deadline flow
    in queue 0 takes the whole link and finishes first, n3's after both;
    MCP paces n1's at the rate its deadline needs (plus 1/4, recomputed
    as it goes, aiming an 8th of the deadline early), so n3's finishes
    first and n1's still by its deadline, near it.  Paced below a segment
    a round trip, the flow empties its pipe between segments: were each
    segment a new message, with the whole deadline again, it would keep
    its first rate and end at 4/5 of the deadline (1.2 s)."""
    n1, _, n3 = bench.senders
    before = mcp_stats()
    (deadline_fct, other_fct), port = flows(bench, tmp_path, [n1, n3])
    after = mcp_stats()
    print(f"{bench.transport}: deadline flow {deadline_fct:.2f} s, other "
          f"{other_fct:.2f} s")
    if bench.transport == "dctcp":
        assert deadline_fct < other_fct, (deadline_fct, other_fct)
        return
    # After the other flow, by its deadline and near it: the rate falls
    # as the flow gets ahead (1.42-1.44 s in three runs; at the line rate,
    # with the other flow, it would take at most 2 * ALONE_S, 0.8 s).
    assert other_fct < deadline_fct <= DEADLINE_S, (deadline_fct, other_fct)
    assert deadline_fct > 0.85 * DEADLINE_S, deadline_fct
    assert after["deadline-messages"] > before["deadline-messages"]
    assert after["rate-updates"] > before["rate-updates"]
    assert after["terminated-late"] == before["terminated-late"]
    assert after["setsockopt-errors"] == before["setsockopt-errors"]
    assert int(port["details"]["deadline-packets"]) > 500


def test_a_deadline_it_cannot_meet_is_given_up(mcp_bench, tmp_path):
    """n2's 1 MB (about 700 packets) with a 100 ms deadline needs 0.4 s: at
    100 ms MCP gives the deadline up, its mark keeps the size, and the
    switch puts the rest of the flow with the known sizes (queue 3)
    instead of queue 0; the flow then ends as at the line rate."""
    _, n2, _ = mcp_bench.senders
    before = mcp_stats()
    (fct,), port = flows(mcp_bench, tmp_path, [n2])
    after = mcp_stats()
    details, queues = port["details"], port["queues"]
    print(f"{fct:.2f} s, {details['deadline-packets']} packets with a "
          f"deadline, {details['sized-packets']} with a size")
    assert after["terminated-late"] == before["terminated-late"] + 1
    # Without the termination every packet of the flow would carry the
    # deadline; the ones the server sent before it (a window ahead of the
    # link, queued in the switch) do.
    sized = int(details["sized-packets"])
    assert sized > 150 and int(details["deadline-packets"]) > 50, details
    # Queue 3 is also the lowest, for the hosts' few ARP and ND frames.
    assert 0 <= int(queues[3]["enqueued-packets"]) - sized <= 10
    # Given up at 100 ms, then at the line rate: not paced to a deadline
    # it cannot meet (which would stretch it without end).
    assert fct < 0.1 + 2 * ALONE_S, fct


def test_with_the_capacity_an_infeasible_deadline_is_given_up_at_once(
        mcp_bench, tmp_path):
    """Registered with the bottleneck's capacity (--mcp-capacity), MCP gives
    up n2's 100 ms deadline for 1 MB as soon as the message starts: it
    needs 80 Mbit/s of a 20 Mbit/s link (the paper's Z > C).  Only the
    first segments carry the deadline."""
    _, n2, _ = mcp_bench.senders
    # Registered already: this sets the capacity of the registered one.
    agent("dctcp", "register", "--mcp-capacity", str(RATE))
    before = mcp_stats()
    try:
        (fct,), port = flows(mcp_bench, tmp_path, [n2])
        after = mcp_stats()
    finally:
        agent("dctcp", "register", "--mcp-capacity", "0")
    assert before["capacity"] == RATE and mcp_stats()["capacity"] == 0
    details = port["details"]
    print(f"{fct:.2f} s, {details['deadline-packets']} packets with a "
          f"deadline, {details['sized-packets']} with a size")
    assert after["terminated-capacity"] == before["terminated-capacity"] + 1
    assert after["terminated-late"] == before["terminated-late"]
    assert int(details["deadline-packets"]) <= 10, details
    assert int(details["sized-packets"]) > 650, details

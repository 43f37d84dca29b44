"""Completions that mean what the application means (issue 9).

The switch learns its thresholds from the sizes of completed messages, so
it must count one completion per application message, of that message's
size.  Real servers from Debian and their real clients, through the switch
(testbed/hosts.py), the host agent attached to the server's cgroup:

- nginx writes each HTTP/1.1 response as a header (writev) then the body
  (sendfile) on a keep-alive connection; curl fetches many files over one
  connection;
- redis-server writes a large reply in pieces, as the socket buffer takes
  them; redis-py (Debian's python3-redis) sends one GET at a time;
- memcached writes a reply with one sendmsg() of header, value and END;
  pymemcache (Debian's python3-pymemcache) sends one get at a time;

both with trust=host (the agent's reports) and trust=switch (the switch's
own count).  Then an application that marks its records with MSG_EOR,
and a long transfer with short pauses through a shaped port."""

import sys

import pytest

from tests.conftest import REPO
from tests.endhosts import agent, assert_learned_exactly, counters, transfer
from testbed.servers import Memcached, Nginx, Redis, resp_bulk_reply_size
from testbed.workload import load_cdf, weyl_samples


# The thesis's micro workload (80 % 10 kB, 20 % 1000 kB), with distinct
# sizes so that every percentile is checked.
NGINX_FILES = ([9000 + 137 * i for i in range(24)]
               + [990000 + 1111 * i for i in range(6)])


def agent_histogram_total(cgroup):
    out = agent("status", "--cgroup", str(cgroup.path)).stdout
    return sum(int(line.split(":")[1]) for line in out.splitlines()
               if "size-hist" in line)


@pytest.mark.parametrize("trust", ["host", "switch"])
def test_nginx_responses_are_messages(hosts, qos, cgroup, tmp_path, trust):
    root = tmp_path / "www"
    root.mkdir()
    names = []
    for i, size in enumerate(NGINX_FILES):
        (root / f"f{i}").write_bytes(b"a" * size)
        names.append(f"f{i}")
    names = names[::2] + names[1::2]        # Mix short and long.
    agent("attach", "--cgroup", str(cgroup.path))
    qos.update_awafs("p2", trust=trust)
    nginx = Nginx(hosts.h1, root, cgroup=cgroup)
    try:
        args = ["curl", "-sS", "--http1.1", "-w",
                "%{size_header} %{size_download} %{num_connects}\\n"]
        for name in names:
            args += ["-o", "/dev/null", nginx.url(name)]
        out = hosts.h2.run(*args, timeout=120).stdout.split("\n")
    finally:
        nginx.stop()
    rows = [list(map(int, line.split())) for line in out if line]
    assert len(rows) == len(names)
    assert sum(r[2] for r in rows) == 1, "curl did not keep one connection"
    # Each response is its header and its body, whatever the writes.
    assert_learned_exactly(qos, [h + b for h, b, _ in rows])
    c = counters(cgroup)
    assert c["messages"] == c["completions"] == len(names)
    assert c["end-turnaround"] == len(names) and c["lost"] == 0
    assert agent_histogram_total(cgroup) == len(names)


KV_CLIENT = str(REPO / "testbed" / "kv_client.py")


def kv_client(hosts, kind, server, mode, values):
    """testbed/kv_client.py in h2: values k0, k1, ... stored or read."""
    return hosts.h2.run(sys.executable, KV_CLIENT, kind, server.host.addr,
                        str(server.port), mode, "k",
                        ",".join(map(str, values)), timeout=120).stdout


def memcached_reply_size(i, value_len):
    return len(f"VALUE k{i} 0 {value_len}\r\n") + value_len \
        + len("\r\nEND\r\n")


@pytest.mark.parametrize("trust", ["host", "switch"])
@pytest.mark.parametrize("kind", ["redis", "memcached"])
def test_cache_replies_are_messages(hosts, qos, cgroup, workloads, kind,
                                    trust):
    """Values of the cache workload's sizes and two large ones (redis
    writes them in pieces as the socket buffer takes them; memcached with
    one sendmsg of header, value and trailer), stored before the agent and
    the switch count anything, so that only the replies to the reads are
    messages."""
    values = weyl_samples(load_cdf(workloads / "cache.cdf"), 40) \
        + [300000, 900000]
    server = (Redis if kind == "redis" else Memcached)(hosts.h1,
                                                       cgroup=cgroup)
    try:
        kv_client(hosts, kind, server, "load", values)
        # A server stalled for longer than the coalescing time between two
        # pieces of a reply splits it (a limit of the heuristic,
        # docs/design.md); memcached on this 2-core machine, which shares
        # its core with everything but the PMD, stalled 10 ms once in CI.
        agent("attach", "--cgroup", str(cgroup.path), "--coalesce-us",
              "50000")
        qos.update_awafs("p2", trust=trust)
        out = kv_client(hosts, kind, server, "get", values)
    finally:
        server.stop()
    assert int(out) == sum(values)
    if kind == "redis":
        sizes = [resp_bulk_reply_size(v) for v in values]
    else:
        sizes = [memcached_reply_size(i, v) for i, v in enumerate(values)]
    c = counters(cgroup)
    assert c["completions"] == len(values) and c["lost"] == 0, c
    assert_learned_exactly(qos, sizes)


def test_msg_eor_gives_exact_records(hosts, qos, cgroup):
    """Messages written in 1000-byte writes 15 ms apart (longer than the
    10 ms coalescing time), back to back: with MSG_EOR on each message's
    last write (and the cgroup declared to mark its records) the switch
    learns exactly the messages; without, the heuristic splits them at the
    pauses."""
    sizes = [5000, 12000, 3000, 20000, 8000, 1500]
    agent("attach", "--cgroup", str(cgroup.path), "--records")
    chunked = ["--chunk", "1000", "--chunk-gap-ms", "15"]
    assert transfer(hosts, sizes, gap_ms=0, cgroup=cgroup,
                    extra=chunked + ["--eor"]) == sum(sizes)
    assert_learned_exactly(qos, sizes)
    c = counters(cgroup)
    assert c["end-record"] == len(sizes)
    assert c["end-idle"] == c["end-turnaround"] == 0

    qos.set_awafs("p2", queues=2, percentiles=50,
                  **{"window-type": "exact", "window-ms": 60000,
                     "min-samples": 1, "interval-ms": 100})
    agent("detach", "--cgroup", str(cgroup.path))
    agent("attach", "--cgroup", str(cgroup.path))
    transfer(hosts, sizes, gap_ms=0, cgroup=cgroup, extra=chunked)
    _, details, _ = qos.qos_show("p2")
    assert int(details["completions"]) > len(sizes)


@pytest.mark.parametrize("trust", ["host", "switch"])
def test_paused_long_transfer_is_one_message(hosts, qos, cgroup, trust):
    """A 3 MB message written in 64 kB writes 0.3 ms apart through a port
    shaped to 20 Mbit/s (1.2 s), so that TCP waits for its congestion
    window, then a 200 kB message 2.5 s after the first was written: two
    messages, for the agent (pauses shorter than its coalescing time) and
    for the switch (no idle gap after a PSH segment longer than idle-us).
    (Written while the first was still queued, the second would be part of
    it: without MSG_EOR, writes behind unsent data are one message.)"""
    sizes = [3000000, 200000]
    agent("attach", "--cgroup", str(cgroup.path))
    # idle-us 0.5 s: longer than a retransmission timeout or a sender
    # starved of CPU on a busy 2-core machine (seen once in CI with 50 ms:
    # a 50 ms stall after a write's short PSH segment split the message),
    # far shorter than the 2.5 s between the two messages.
    qos.update_awafs("p2", trust=trust, **{"max-rate": 20000000,
                                           "idle-us": 500000})
    assert transfer(hosts, sizes, gap_ms=2500, cgroup=cgroup,
                    extra=["--chunk", "65536", "--chunk-gap-ms",
                           "0.3"]) == sum(sizes)
    assert_learned_exactly(qos, sizes)

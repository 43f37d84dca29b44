"""The traffic generator (testbed/flowgen.py) on the loopback interface:
what it measures must be the network's, not its own."""

import socket
import subprocess
import sys
import time

import pytest

from bench.generator_stall import peak_rss_kb
from tests.conftest import REPO

BIG = 256 << 20
# The client: one connection fetches BIG bytes, another 1 kB flows until
# it is done; prints their count and its own peak RSS in kB.
CLIENT = f"""
import asyncio
from testbed.flowgen import Peer, fetch
from bench.generator_stall import peak_rss_kb

async def main():
    big, small = Peer("127.0.0.1:{{port}}"), Peer("127.0.0.1:{{port}}")
    await fetch(small, 1, 0, False)     # An empty body: the header alone.
    done = asyncio.ensure_future(fetch(big, 2, {BIG}, False))
    n = 0
    while not done.done():
        await fetch(small, 3 + n, 1000, False)
        n += 1
    await done
    print(n, peak_rss_kb("self"))

asyncio.run(main())
"""


@pytest.mark.parametrize("one_call", [False, True])
def test_a_large_response_is_never_held_in_memory(tmp_path, one_call):
    """A 256 MiB response passes through server and client in pieces:
    neither holds it whole (a copy of that size blocks the process's event
    loop, and every other flow of that server or client waits, by about
    0.5 s per 450 MB measured before), and the server goes on serving
    another connection's flows meanwhile."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "testbed.flowgen", "server", "--addr",
         "127.0.0.1", "--port", str(port), "--log",
         str(tmp_path / "server.csv")] + (["--one-call"] if one_call else []),
        cwd=REPO)
    try:
        for _ in range(100):
            probe = subprocess.run(
                [sys.executable, "-m", "testbed.flowgen", "probe",
                 "--server", f"127.0.0.1:{port}"], cwd=REPO,
                capture_output=True)
            if probe.returncode == 0:
                break
            time.sleep(0.1)
        assert server.poll() is None, "the server did not start"
        out = subprocess.run(
            [sys.executable, "-c", CLIENT.replace("{port}", str(port))],
            cwd=REPO, capture_output=True, text=True, check=True, timeout=120)
        small_flows, client_kb = map(int, out.stdout.split())
        server_kb = peak_rss_kb(server.pid)
    finally:
        server.terminate()
        server.wait()
    assert small_flows > 0
    assert server_kb < 64 << 10, f"server peaked at {server_kb} kB"
    assert client_kb < 64 << 10, f"client peaked at {client_kb} kB"

"""What one large response costs the other flows of the evaluation's
generator (testbed/flowgen.py), on the loopback interface, no switch: one
connection fetches --size bytes while another fetches 1 kB flows back to
back (5 ms apart); prints those flows' FCT quantiles and the server's peak
RSS.  A generator whose event loop stalls adds its stall to every flow of
that server or client, whatever the scheme under test.

usage: python3 -m bench.generator_stall [--size BYTES] [--runs N]"""

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path

from testbed.flowgen import Peer, fetch

REPO = Path(__file__).resolve().parent.parent
PORT = 17124


def peak_rss_kb(pid):
    """The peak RSS of process 'pid' ("self": this one) since its exec, in
    kB (VmHWM: getrusage()'s maxrss keeps the forking parent's)."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f
                    if line.startswith("VmHWM"))


async def one_run(size, log):
    server = subprocess.Popen(
        [sys.executable, "-m", "testbed.flowgen", "server", "--addr",
         "127.0.0.1", "--port", str(PORT), "--log", log], cwd=REPO)
    try:
        for _ in range(100):
            try:
                small = Peer(f"127.0.0.1:{PORT}")
                await fetch(small, 1, 1000, False)
                break
            except OSError:
                await asyncio.sleep(0.1)
        big = Peer(f"127.0.0.1:{PORT}")
        done = asyncio.ensure_future(fetch(big, 2, size, False))
        fcts, flow = [], 3
        while not done.done() or len(fcts) < 100:
            fcts.append((await fetch(small, flow, 1000, False))[0])
            flow += 1
            await asyncio.sleep(0.005)
        big_s = (await done)[0]
        return big_s, sorted(fcts), peak_rss_kb(server.pid) // 1024
    finally:
        server.terminate()
        server.wait()


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=450000000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"| run | {args.size / 1e6:.0f} MB in (s) | 1 kB flows | median "
          "(ms) | p99 (ms) | max (ms) | server peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|")
    for run in range(1, args.runs + 1):
        big_s, fcts, rss = asyncio.run(one_run(args.size, "/dev/null"))
        q = [fcts[int(p * (len(fcts) - 1))] * 1e3 for p in (0.5, 0.99, 1)]
        print(f"| {run} | {big_s:.2f} | {len(fcts)} | {q[0]:.2f} | "
              f"{q[1]:.1f} | {q[2]:.1f} | {rss} |")


if __name__ == "__main__":
    main(sys.argv[1:])

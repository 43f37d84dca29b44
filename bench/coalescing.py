"""How long a coalescing time the host agent needs: messages split by it.

    python3 -m bench.coalescing [--runs N] [--coalesce-us US,US,...]

redis-server (Debian) in h1's cgroup with the agent attached, values of the
cache workload (40 samples) plus 300 kB and 1 MB, which redis writes in
pieces as the socket buffer takes them; redis-py in h2 GETs each value once
over one connection, through the sandboxed switch.  Each reply is one
message: every 'end-idle' the agent counts is a reply split because redis
paused between two pieces for longer than the coalescing time.  Prints, per
coalescing time, the splits of each run (host-agent/README.md argues the
default from them)."""

import argparse
import subprocess
import sys
from pathlib import Path

from testbed.hosts import Cgroup, HostPair
from testbed.servers import Redis, resp_command
from testbed.workload import load_cdf, weyl_samples, workloads_dir

REPO = Path(__file__).resolve().parent.parent

AGENT = str(REPO / "build" / "bin" / "awafs-host")
GETS = """
import sys, redis
r = redis.Redis(host=sys.argv[1], port=int(sys.argv[2]))
for i in range(int(sys.argv[3])):
    r.get(f"k{i}")
"""


def splits(hp, values, coalesce_us):
    cg = Cgroup("awafs-coalesce")
    redis = Redis(hp.h1, cgroup=cg)
    try:
        load = b"".join(resp_command("SET", f"k{i}", b"v" * size)
                        for i, size in enumerate(values))
        subprocess.run(hp.h2.argv("redis-cli", "-h", hp.h1.addr, "--pipe"),
                       input=load, check=True, capture_output=True)
        subprocess.run([AGENT, "attach", "--cgroup", str(cg.path),
                        "--coalesce-us", str(coalesce_us)], check=True,
                       capture_output=True)
        hp.h2.run(sys.executable, "-c", GETS, hp.h1.addr, str(redis.port),
                  str(len(values)))
        status = subprocess.run([AGENT, "status", "--cgroup", str(cg.path)],
                                check=True, capture_output=True, text=True)
        counters = dict(kv.split("=") for kv in
                        status.stdout.splitlines()[0].split()[2:])
        return int(counters["end-idle"])
    finally:
        redis.stop()
        subprocess.run([AGENT, "detach", "--cgroup", str(cg.path)],
                       capture_output=True)
        cg.delete()


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--coalesce-us", default="1000,2000,5000,10000,20000")
    args = ap.parse_args(argv)
    values = weyl_samples(load_cdf(workloads_dir() / "cache.cdf"), 40) \
        + [300000, 1000000]
    hp = HostPair()
    try:
        print("| coalesce (µs) | replies split, per run "
              f"({len(values)} replies each) |")
        print("|---|---|")
        for us in map(int, args.coalesce_us.split(",")):
            runs = [splits(hp, values, us) for _ in range(args.runs)]
            print(f"| {us} | {', '.join(map(str, runs))} |", flush=True)
    finally:
        hp.close()


if __name__ == "__main__":
    main(sys.argv[1:])

"""An HTTP/1.1 load generator that measures flow completion times.

    python3 httpload.py --server ADDR:PORT=NAMES ... --load BPS --flows N
                        --seed S --out CSV

Requests arrive as a Poisson process whose rate gives an offered load of
BPS bits/s for the mean response size.  Each request names a file (a
"flow"), drawn from the servers' NAMES=SIZE,... lists with their weights:
every entry NAME:SIZE:WEIGHT.  Requests go over persistent (keep-alive)
connections: an idle one of that server if there is one, else a new one,
so that concurrency follows the load.  The FCT of a flow is the time from
writing its request to reading the last byte of its response.  One CSV row
per flow: size, server, start (s from the first arrival), fct_us,
new_connection, late_us (how late the request left against its Poisson
schedule: the generator's own overhead).

It is run inside the receiving host's network namespace and never talks to
anything but the given addresses.  The same seed gives the same arrivals
and sizes whatever the scheme under test."""

import argparse
import asyncio
import csv
import random
import sys
import time


class Server:
    def __init__(self, spec):
        addr, files = spec.split("=", 1)
        self.host, port = addr.rsplit(":", 1)
        self.port = int(port)
        self.files = []             # (name, size, weight)
        for entry in files.split(","):
            name, size, weight = entry.split(":")
            self.files.append((name, int(size), float(weight)))
        self.idle = []              # Idle connections: (reader, writer).


async def fetch(server, name):
    """Sends one request on a keep-alive connection; returns (fct_us,
    bytes of the body, whether it opened a connection)."""
    new = not server.idle
    t0 = time.monotonic()
    if new:
        reader, writer = await asyncio.open_connection(server.host,
                                                       server.port)
    else:
        reader, writer = server.idle.pop()
    writer.write(f"GET /{name} HTTP/1.1\r\nHost: {server.host}\r\n\r\n"
                 .encode())
    header = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in header.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    await reader.readexactly(length)
    fct = (time.monotonic() - t0) * 1e6
    server.idle.append((reader, writer))
    return fct, length, new


async def run(servers, load_bps, n_flows, seed):
    rng = random.Random(seed)
    choices = [(s, name, size, w) for s in servers
               for name, size, w in s.files]
    weights = [c[3] for c in choices]
    mean_bits = 8 * sum(c[2] * c[3] for c in choices) / sum(weights)
    rate = load_bps / mean_bits            # Flows per second.
    plan, t = [], 0.0
    for _ in range(n_flows):
        t += rng.expovariate(rate)
        s, name, size, _ = rng.choices(choices, weights)[0]
        plan.append((t, s, name, size))

    rows = []
    start = time.monotonic()

    async def one(at, s, name, size):
        await asyncio.sleep(max(0.0, start + at - time.monotonic()))
        late = time.monotonic() - start - at
        fct, length, new = await fetch(s, name)
        assert length == size, (name, length, size)
        rows.append((size, f"{s.host}:{s.port}", round(at, 6), round(fct),
                     int(new), round(late * 1e6)))

    await asyncio.gather(*(one(*p) for p in plan))
    for s in servers:
        for _, writer in s.idle:
            writer.close()
    return sorted(rows, key=lambda r: r[2])


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", action="append", required=True)
    ap.add_argument("--load", type=float, required=True)
    ap.add_argument("--flows", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    rows = asyncio.run(run([Server(s) for s in args.server], args.load,
                           args.flows, args.seed))
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["size", "server", "start_s", "fct_us", "new_connection",
                    "late_us"])
        w.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1:])

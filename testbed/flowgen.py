"""The project's traffic generator: flows of workload sizes over real TCP,
with their completion times.

    python3 flowgen.py server --addr A --port P [--one-call]
                              [--karuna size|deadline:MS[:BPS]] --log CSV
    python3 flowgen.py client --server A:P [--server ...]
                              --phase CDF:N [--phase CDF:N ...]
                              --load BPS --rate BPS [--seed S]
                              [--first-id I] [--base-rtt-us US]
                              [--per-flow] --out CSV
    python3 flowgen.py probe --server A:P [--server ...] [--per-flow]

The client asks, the server answers: a request is 16 bytes (flow id and
size, big-endian 64-bit each); the response is a 16-byte header (flow id and
size) and then the body, written as real servers write a response -- the
header and the body in two calls -- or, with --one-call, in one; a body
over 1 MiB in pieces of 1 MiB, as servers write large files, so that
neither side ever holds a whole response (a large one would stall every
other flow of that server or client while it is copied).  The
server belongs in the cgroup of the host agent; the switch's AWAFS port is
on the way back to the client.

Client: Poisson arrivals whose rate offers --load bits/s for the CDF's mean
size (sizes drawn from the CDF, shared/workloads/*.cdf format), each flow to
a server drawn uniformly; each --phase CDF:N is N such flows, one phase
after the other (a workload shift: the arrivals go on, from another CDF);
over persistent connections (an idle one to that server, else a new one:
many flows per connection, so the host agent's message boundaries matter)
or, with --per-flow, a new connection per flow (its handshake counts in the
FCT).  The same seed gives the same flows.
Flows are numbered from --first-id (1), so that several clients of the
same servers can tell their flows apart in the servers' logs.
FCT is the time from writing the request (or connecting) to reading the
response's last byte.  Slowdown is FCT divided by the ideal FCT of that
flow alone: the base RTT plus the response's bytes on the wire at --rate.
The base RTT is the smallest FCT of 20 one-byte flows: 'probe' prints it
(in µs), for --base-rtt-us; without that option the client measures it
first.  The probes are flows too: a switch that learns from completions
learns them, so a bed measures them before it configures the switch.

Server, --karuna: a Karuna-aware application (seed 003).  Before each
response it sets its socket's mark (SO_MARK) to the response's Karuna word,
which the host agent (attach --karuna) copies into the AWAFS option:
"size" says the response's size (a type-2 flow), "deadline:MS" a deadline
of MS ms and the size (type 1), "deadline:MS:BPS" a deadline of the time
the response takes at BPS bits/s, at least MS ms (karuna_deadline_ms()).
Without it the mark stays 0 (type 3).

Server: per flow, the TCP_INFO counters of its connection from the
response's first write until the next request or the close (when the
client has it all): segments retransmitted and retransmission timeouts
(tcpi_total_retrans, tcpi_total_rto), the bytes sent again
(tcpi_bytes_sent beyond the response's own: retransmissions and tail loss
probes, which tcpi_total_retrans leaves out), and the duplicate SACKs
received (tcpi_dsack_dups: the client got a segment twice, so a copy sent
again was not needed; after a timeout, a spurious one).  One CSV row per
flow: flow id, retransmits, timeouts, resent_bytes, dsacks.

The client's CSV, one row per flow: id, size, server, start_s, fct_us,
slowdown, new_connection, phase (0, 1, ...), late_us (how late the
generator wrote the request against its Poisson schedule: its own
overhead); merged with the servers' logs by flow id
(merge_logs()).  Runs in the hosts' network namespaces and talks to no
address but the given ones."""

import argparse
import asyncio
import csv
import random
import socket
import struct
import sys
import time

from testbed.workload import inverse_cdf, load_cdf

REQ = struct.Struct("!QQ")
SO_MARK = 36                    # socket.SO_MARK, absent before Python 3.12.
KARUNA_DEADLINE_MAX_MS = 0xfff
KARUNA_SIZE_MAX_KB = 0xfffff
TCP_INFO_LEN = 248
# struct tcp_info offsets (linux/tcp.h): tcpi_total_retrans, tcpi_bytes_sent
# (Linux 4.19 and later), tcpi_dsack_dups (5.0), tcpi_total_rto (6.7; 0
# before).
TOTAL_RETRANS_OFS = 100
BYTES_SENT_OFS = 200
DSACK_DUPS_OFS = 216
TOTAL_RTO_OFS = 240
# A response body is written, and read, in pieces of this size.
BODY = memoryview(b"b" * (1 << 20))
# Bytes on the wire per segment besides payload: Ethernet 14 + FCS 4 +
# preamble/IFG 20 + IPv4 20 + TCP 20 + options 32 (timestamps, AWAFS).
WIRE_OVERHEAD, MSS = 110, 1428


def cdf_mean(points):
    """The mean of inverse_cdf() draws: the first point's mass at its size,
    linear between points."""
    s0, p0 = points[0]
    m = p0 * s0
    for s, p in points[1:]:
        m += (p - p0) * (s + s0) / 2
        s0, p0 = s, p
    return m


def tcp_counters(sock):
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
    retrans = struct.unpack_from("=I", info, TOTAL_RETRANS_OFS)[0]
    sent = struct.unpack_from("=Q", info, BYTES_SENT_OFS)[0]
    dsacks = struct.unpack_from("=I", info, DSACK_DUPS_OFS)[0]
    rto = (struct.unpack_from("=H", info, TOTAL_RTO_OFS)[0]
           if len(info) >= TOTAL_RTO_OFS + 2 else 0)
    return retrans, rto, sent, dsacks


def karuna_mark(deadline_ms, size_bytes):
    """The socket mark that tells Karuna's switch a flow's deadline (0:
    none) and size (0: unknown), as Karuna's mark does: 12 bits of
    deadline in ms, 20 bits of size in KB, rounded up
    (host-agent/README.md, "Karuna")."""
    size_kb = -(-size_bytes // 1024)
    if not 0 <= deadline_ms <= KARUNA_DEADLINE_MAX_MS:
        raise ValueError(f"deadline {deadline_ms} ms: 0 to "
                         f"{KARUNA_DEADLINE_MAX_MS}")
    if not 0 <= size_kb <= KARUNA_SIZE_MAX_KB:
        raise ValueError(f"size {size_bytes} bytes: at most "
                         f"{KARUNA_SIZE_MAX_KB} KB")
    return deadline_ms << 20 | size_kb


def set_mark(sock, mark):
    """SO_MARK as the kernel's u32: an int argument of setsockopt() is a C
    int, too small for deadlines of 2048 ms and more."""
    sock.setsockopt(socket.SOL_SOCKET, SO_MARK, struct.pack("=I", mark))


def karuna_spec(spec):
    """--karuna's value as (deadline floor in ms, rate in bits/s or None):
    (0, None) for "size", (MS, None) for "deadline:MS", (MS, BPS) for
    "deadline:MS:BPS"."""
    if spec == "size":
        return 0, None
    kind, _, rest = spec.partition(":")
    ms, _, bps = rest.partition(":")
    if (kind != "deadline" or not ms.isdigit()
            or not 0 < int(ms) <= KARUNA_DEADLINE_MAX_MS
            or (bps and not (bps.isdigit() and int(bps) > 0))):
        raise argparse.ArgumentTypeError(
            f'"{spec}": "size", "deadline:MS" or "deadline:MS:BPS", MS from '
            f"1 to {KARUNA_DEADLINE_MAX_MS}, BPS a positive integer")
    return int(ms), int(bps) if bps else None


def karuna_deadline_ms(spec, size_bytes):
    """The deadline (ms; 0: none) that the --karuna 'spec' (as karuna_spec()
    parses it) gives a response of 'size_bytes': its floor, or the time the
    response takes at the spec's rate if longer, at most what the mark
    holds."""
    floor_ms, bps = spec
    if not bps:
        return floor_ms
    return min(KARUNA_DEADLINE_MAX_MS,
               max(floor_ms, -(-size_bytes * 8000 // bps)))


# ---- server -----------------------------------------------------------

async def write_body(writer, size, first=b""):
    """Writes 'first' and then 'size' bytes of body in pieces of at most
    len(BODY), draining after each: a generator that copied a large
    response into memory at once (or into the transport's buffer) would
    stall its other connections for as long, and their FCTs with them."""
    n = min(size, len(BODY))
    writer.write(first + BODY[:n] if first else BODY[:n])
    size -= n
    while size:
        await writer.drain()
        n = min(size, len(BODY))
        writer.write(BODY[:n])
        size -= n
    await writer.drain()


async def serve_connection(reader, writer, one_call, karuna, log):
    sock = writer.get_extra_info("socket")
    pending = None              # (flow id, bytes, counters at its start)

    def settle():
        if pending:
            flow, size, start = pending
            now = tcp_counters(sock)
            log.writerow([flow, now[0] - start[0], now[1] - start[1],
                          now[2] - start[2] - size, now[3] - start[3]])

    try:
        while True:
            try:
                req = await reader.readexactly(REQ.size)
            except asyncio.IncompleteReadError:
                break
            settle()
            flow, size = REQ.unpack(req)
            pending = (flow, REQ.size + size, tcp_counters(sock))
            header = REQ.pack(flow, size)
            if karuna is not None:
                wire = REQ.size + size
                set_mark(sock, karuna_mark(karuna_deadline_ms(karuna, wire),
                                           wire))
            if one_call:
                await write_body(writer, size, header)
            else:
                writer.write(header)
                await writer.drain()
                await write_body(writer, size)
        settle()
    finally:
        writer.close()


async def server_main(args):
    with open(args.log, "w", newline="", buffering=1) as f:
        log = csv.writer(f)
        log.writerow(["id", "retransmits", "timeouts", "resent_bytes",
                      "dsacks"])
        srv = await asyncio.start_server(
            lambda r, w: serve_connection(r, w, args.one_call, args.karuna,
                                          log),
            args.addr, args.port, backlog=1024)
        async with srv:
            await srv.serve_forever()


# ---- client -----------------------------------------------------------

class Peer:
    def __init__(self, spec):
        host, port = spec.rsplit(":", 1)
        self.host, self.port = host, int(port)
        self.idle = []


async def fetch(peer, flow, size, per_flow):
    t0 = time.monotonic()
    new = per_flow or not peer.idle
    if new:
        reader, writer = await asyncio.open_connection(peer.host, peer.port)
    else:
        reader, writer = peer.idle.pop()
    writer.write(REQ.pack(flow, size))
    header = await reader.readexactly(REQ.size)
    assert REQ.unpack(header) == (flow, size), "response of another flow"
    await read_body(reader, size)
    fct = time.monotonic() - t0
    if per_flow:
        writer.close()
    else:
        peer.idle.append((reader, writer))
    return fct, new


async def read_body(reader, size):
    """Reads and drops 'size' bytes, as they come: readexactly() would
    gather the whole body and copy it at the end, stalling the client's
    other flows."""
    while size:
        data = await reader.read(min(size, len(BODY)))
        if not data:
            raise asyncio.IncompleteReadError(b"", size)
        size -= len(data)


def ideal_fct(size, rate, base_rtt):
    wire = size + REQ.size
    segments = -(-wire // MSS)
    return base_rtt + (wire + segments * WIRE_OVERHEAD) * 8 / rate


async def base_rtt_of(peers, per_flow):
    """The fastest of 20 one-byte flows (flow id 0), with no other load."""
    rtt = min([(await fetch(peers[i % len(peers)], 0, 1, per_flow))[0]
               for i in range(20)])
    for p in peers:
        for _, writer in p.idle:
            writer.close()
        p.idle.clear()
    return rtt


async def probe_main(args):
    rtt = await base_rtt_of([Peer(s) for s in args.server], args.per_flow)
    print(round(rtt * 1e6))


async def client_main(args):
    peers = [Peer(s) for s in args.server]
    rng = random.Random(args.seed)
    base_rtt = (args.base_rtt_us / 1e6 if args.base_rtt_us
                else await base_rtt_of(peers, args.per_flow))
    plan, t, flow = [], 0.0, args.first_id - 1
    for phase, spec in enumerate(args.phase):
        cdf, n = spec.rsplit(":", 1)
        points = load_cdf(cdf)
        rate = args.load / (8 * cdf_mean(points))
        for _ in range(int(n)):
            flow += 1
            t += rng.expovariate(rate)
            size = max(1, round(inverse_cdf(points, rng.random())))
            plan.append((t, flow, size, rng.choice(peers), phase))
    rows = []
    start = time.monotonic()

    async def one(at, flow, size, peer, phase):
        await asyncio.sleep(max(0.0, start + at - time.monotonic()))
        late = time.monotonic() - start - at
        fct, new = await fetch(peer, flow, size, args.per_flow)
        rows.append([flow, size, f"{peer.host}:{peer.port}", round(at, 6),
                     round(fct * 1e6),
                     round(fct / ideal_fct(size, args.rate, base_rtt), 3),
                     int(new), phase, round(late * 1e6)])

    await asyncio.gather(*(one(*p) for p in plan))
    for p in peers:
        for _, writer in p.idle:
            writer.close()
    rows.sort()
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "size", "server", "start_s", "fct_us", "slowdown",
                    "new_connection", "phase", "late_us"])
        w.writerows(rows)


def merge_logs(client_csv, server_csvs, timeout=5.0):
    """The client's rows with each flow's retransmits, timeouts, bytes
    sent again and duplicate SACKs from the servers' logs (flow 0, the
    base-RTT probes, is left out).  A server logs a connection's last flow when the client closes
    it, so this waits up to 'timeout' seconds for every flow's row."""
    with open(client_csv) as f:
        rows = list(csv.DictReader(f))
    until = time.monotonic() + timeout
    while True:
        counters = {}
        for path in server_csvs:
            with open(path) as f:
                for r in csv.DictReader(f):
                    counters[r["id"]] = (int(r["retransmits"]),
                                         int(r["timeouts"]),
                                         int(r["resent_bytes"]),
                                         int(r["dsacks"]))
        if (all(r["id"] in counters for r in rows)
                or time.monotonic() > until):
            break
        time.sleep(0.1)
    for r in rows:
        (r["retransmits"], r["timeouts"], r["resent_bytes"],
         r["dsacks"]) = counters.get(r["id"], (0, 0, 0, 0))
    return rows


def main(argv):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("--addr", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--one-call", action="store_true")
    s.add_argument("--karuna", type=karuna_spec)
    s.add_argument("--log", required=True)
    c = sub.add_parser("client")
    c.add_argument("--server", action="append", required=True)
    c.add_argument("--phase", action="append", required=True,
                   metavar="CDF:N")
    c.add_argument("--load", type=float, required=True)
    c.add_argument("--rate", type=float, required=True)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--first-id", type=int, default=1)
    c.add_argument("--base-rtt-us", type=float)
    c.add_argument("--per-flow", action="store_true")
    c.add_argument("--out", required=True)
    p = sub.add_parser("probe")
    p.add_argument("--server", action="append", required=True)
    p.add_argument("--per-flow", action="store_true")
    args = ap.parse_args(argv)
    asyncio.run({"server": server_main, "client": client_main,
                 "probe": probe_main}[args.role](args))


if __name__ == "__main__":
    main(sys.argv[1:])

"""A tenant that lies to the switch's flow table (trust=switch|verify), at a
given wire rate, for bench/trust_bound.py.

    python3 attacker.py --iface IF --src-mac MAC --dst-mac MAC --src IP
                        --dst IP --rate BPS --seconds S [--seed N]
                        [--attacks forged,loop,gap,flood,padded,empty]

It runs in its host's network namespace and sends, through a raw socket
on IF and only to --dst, the attacks of issue 28 in one repeated cycle,
each on 5-tuples of its own (source ports from 20000 up):

- forged: a flow that sent 8 segments of 1000 bytes (past any threshold
  the micro benchmark learns), a FIN and a RST at seq + 2^30, and 8 more
  segments in sequence, which a FIN the switch believed would promote;
- loop: SYN, then 1 byte with FIN, on one 5-tuple, again and again: tiny
  completions to drag the thresholds down;
- gap: SYN, then 100 bytes with FIN at ISN + 1 + 2^30: a gigabyte
  completion to drag them up;
- flood: SYN and one byte from a fresh 5-tuple each time, to evict
  honest flows from the table;
- padded: ACKs without payload, IP total length 40, padded to 1514 bytes;
- empty: ACKs without payload, unpadded, for the byte-free budget.

--attacks picks some of them (all by default).

The cycle's frames are built once; it is paced to --rate in wire bits
(each frame's length and 24 bytes of preamble, inter-frame gap and FCS, as
the switch's max-rate counts them).  At the end it prints one line:
frames and wire bytes sent, and seconds."""

import argparse
import random
import socket
import time

from scapy.all import IP, TCP, Ether

WIRE_OVERHEAD = 24
ETH_P_ALL = 0x0003
BATCH_S = 0.001
ATTACKS = ("forged", "loop", "gap", "flood", "padded", "empty")


class Forger:
    def __init__(self, src_mac, dst_mac, src, dst, rng):
        self.eth = Ether(src=src_mac, dst=dst_mac)
        self.src, self.dst = src, dst
        self.rng = rng
        self.next_port = 20000

    def port(self):
        self.next_port = 20000 + (self.next_port - 19999) % 40000
        return self.next_port

    def seg(self, sport, seq, payload=0, flags="A", pad_to=0):
        pkt = (self.eth / IP(src=self.src, dst=self.dst)
               / TCP(sport=sport, dport=80, seq=seq & 0xFFFFFFFF,
                     flags=flags) / (b"a" * payload))
        frame = bytes(pkt)
        return frame + bytes(max(0, pad_to - len(frame)))

    def isn(self):
        return self.rng.getrandbits(32)

    def forged(self):
        p, isn = self.port(), self.isn()
        out = [self.seg(p, isn, flags="S")]
        seq = isn + 1
        for _ in range(8):
            out.append(self.seg(p, seq, 1000))
            seq += 1000
        out.append(self.seg(p, seq + (1 << 30), flags="FA"))
        out.append(self.seg(p, seq + (1 << 30), flags="R"))
        for _ in range(8):
            out.append(self.seg(p, seq, 1000))
            seq += 1000
        return out

    def loop(self, port, times):
        out = []
        for _ in range(times):
            isn = self.isn()
            out.append(self.seg(port, isn, flags="S"))
            out.append(self.seg(port, isn + 1, 1, flags="FPA"))
        return out

    def gap(self):
        p, isn = self.port(), self.isn()
        return [self.seg(p, isn, flags="S"),
                self.seg(p, isn + 1 + (1 << 30), 100, flags="FPA")]

    def flood(self, n):
        out = []
        for _ in range(n):
            p, isn = self.port(), self.isn()
            out += [self.seg(p, isn, flags="S"), self.seg(p, isn + 1, 1)]
        return out

    def empty(self, n, pad_to=0):
        p, seq = self.port(), self.isn()
        return [self.seg(p, seq, pad_to=pad_to) for _ in range(n)]

    def cycle(self, attacks):
        loop_port = self.port()
        make = {"forged": self.forged,
                "loop": lambda: self.loop(loop_port, 8),
                "gap": self.gap,
                "flood": lambda: self.flood(8),
                "padded": lambda: self.empty(8, pad_to=1514),
                "empty": lambda: self.empty(16)}
        frames = []
        for _ in range(4):
            for name in attacks:
                frames += make[name]()
        return frames


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--src-mac", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--attacks", default=",".join(ATTACKS),
                    type=lambda s: s.split(","),
                    help="which of the attacks, in the cycle's order")
    args = ap.parse_args(argv)
    unknown = set(args.attacks) - set(ATTACKS)
    if unknown:
        ap.error(f"unknown attacks: {', '.join(sorted(unknown))}")

    forger = Forger(args.src_mac, args.dst_mac, args.src, args.dst,
                    random.Random(args.seed))
    frames = forger.cycle(args.attacks)
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                         socket.htons(ETH_P_ALL))
    sock.bind((args.iface, 0))
    bytes_per_s = args.rate / 8
    sent = wire = 0
    t0 = time.monotonic()
    end = t0 + args.seconds
    i = 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        due = t0 + wire / bytes_per_s
        if due > now + BATCH_S:
            time.sleep(due - now)
            continue
        for _ in range(64):
            f = frames[i]
            i = (i + 1) % len(frames)
            try:
                sock.send(f)
            except OSError:         # The veth's queue is full: drop.
                continue
            sent += 1
            wire += len(f) + WIRE_OVERHEAD
    sock.close()
    print(f"frames {sent} wire_bytes {wire} seconds "
          f"{time.monotonic() - t0:.3f}", flush=True)


if __name__ == "__main__":
    main()

"""Counts the IPv4 TCP segments that arrive on an interface, and those of
them marked CE, until SIGTERM; then prints both as JSON
({"tcp": N, "ce": M}).  Run in a host's namespace on the interface a
tunnel delivers its inner frames to, it shows what the decapsulator
passed on to the TCP receiver.

usage: ce_count.py INTERFACE"""

import json
import signal
import socket
import sys

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def main(dev):
    counts = {"tcp": 0, "ce": 0}
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                         socket.htons(ETH_P_ALL))
    sock.bind((dev, 0))

    def stop(*_):
        print(json.dumps(counts), flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    print("ready", flush=True)
    while True:
        frame, addr = sock.recvfrom(128)
        if addr[2] == PACKET_OUTGOING or len(frame) < 34:
            continue
        if frame[12:14] == b"\x08\x00" and frame[23] == 6:
            counts["tcp"] += 1
            counts["ce"] += (frame[15] & 3) == 3


if __name__ == "__main__":
    main(sys.argv[1])

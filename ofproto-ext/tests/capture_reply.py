"""Writes the shared NXST_AWAFS test vector, nxst-awafs-reply.hex: a real
switch's OpenFlow 1.3 reply for an adaptive port that has learned from 400
completions.  tests/test_openflow.py checks that ovs-ofctl and the
controller app print it identically.

usage: build/venv/bin/python ofproto-ext/tests/capture_reply.py
"""

import socket
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent

from awafs_controller.nxst import (EXP_TYPE, NX_VENDOR_ID,
                                   OF13_VERSION, OFPMP_EXPERIMENTER,
                                   OFPT_MULTIPART_REPLY, request_body)
from testbed.ovs_sandbox import one_switch_per_machine
from testbed.switch import Switch, completion_frames, wait_until
from testbed.workload import weyl_samples

OFPT_HELLO, OFPT_MULTIPART_REQUEST = 0, 18
MICRO = [(10000, 0.0), (10000, 0.8), (1000000, 0.8), (1000000, 1.0)]


def awafs_request(port_no, xid):
    body = struct.pack("!HH4xII", OFPMP_EXPERIMENTER, 0, NX_VENDOR_ID,
                       EXP_TYPE) + request_body(port_no)
    return struct.pack("!BBHI", OF13_VERSION, OFPT_MULTIPART_REQUEST,
                       8 + len(body), xid) + body


def recv_message(sock):
    header = b""
    while len(header) < 8:
        header += sock.recv(8 - len(header))
    length = struct.unpack("!H", header[2:4])[0]
    body = b""
    while len(body) < length - 8:
        body += sock.recv(length - 8 - len(body))
    return header + body


def capture(mgmt_sock, port_no):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(mgmt_sock)
        sock.sendall(struct.pack("!BBHI", OF13_VERSION, OFPT_HELLO, 8, 1))
        sock.sendall(awafs_request(port_no, 2))
        while True:
            msg = recv_message(sock)
            if msg[1] == OFPT_MULTIPART_REPLY:
                return msg


def main():
    with one_switch_per_machine():
        sw = Switch()
        try:
            sb = sw.sb
            sb.vsctl("set", "bridge", "br0", "protocols=OpenFlow13")
            sb.set_awafs("p1", queues=2, thresholds=5000, percentiles=12.5,
                         **{"window-ms": 5000})
            sw.play(completion_frames(weyl_samples(MICRO, 400)), rate=1000)
            assert wait_until(
                lambda: sb.qos_show("p1")[1]["window-samples"] == "400", 5)
            msg = capture(str(sb.dir / "br0.mgmt"), 2)
        finally:
            sw.close()
    (HERE / "nxst-awafs-reply.hex").write_text(msg.hex() + "\n")


if __name__ == "__main__":
    main()

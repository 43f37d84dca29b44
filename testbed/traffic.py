"""Test traffic for the datapath tests and the demo: veth pairs whose switch
ends are DPDK net_af_packet ports, AWAFS-tagged TCP frames built with scapy,
injected with a raw socket on one peer and captured on another.

Frames are injected only after the bridge is set up, so none is lost as an
upcall error (a finite net_pcap replay starts before the port is
registered)."""

import os
import re
import select
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

CORE_HEADER = Path(__file__).resolve().parent.parent / "lib" / "awafs.h"


def core_constants():
    """The numeric #defines of lib/awafs.h, the one definition of the
    option's wire format (which the BPF programs take too)."""
    return {name: int(value, 0) for name, value in re.findall(
        r"^#define (AWAFS_\w+) +(0x[0-9a-fA-F]+|\d+)u?\b",
        CORE_HEADER.read_text(), re.M)}


_CORE = core_constants()
AWAFS_KIND, AWAFS_EXID = _CORE["AWAFS_OPT_KIND"], _CORE["AWAFS_OPT_EXID"]
SENT_MAX = _CORE["AWAFS_BYTES_SENT_MAX"]
SIZE_MAX = _CORE["AWAFS_FLOW_SIZE_MAX"]
COMPLETED_BIT = _CORE["AWAFS_OPT_COMPLETED_BIT"]
ETH_P_ALL = 0x0003
# Preamble, inter-frame gap and FCS: what each frame costs the wire beyond
# its bytes, which the shaper charges.
WIRE_OVERHEAD = _CORE["AWAFS_WIRE_OVERHEAD"]


def awafs_option(bytes_sent, flow_size=None, prev=None, karuna=None):
    """The AWAFS TCP option (docs/header.md) as a scapy option tuple;
    'prev' is the previous message's (size, end sequence number), 'karuna'
    the flow's Karuna word (deadline ms << 20 | size KB)."""
    sent = min(bytes_sent, SENT_MAX)
    body = struct.pack("!HI", AWAFS_EXID, sent if flow_size is None
                       else sent | COMPLETED_BIT)
    if flow_size is not None:
        body += struct.pack("!I", min(flow_size, SIZE_MAX))
    if prev is not None:
        body += struct.pack("!II", *prev)
    if karuna is not None:
        body += struct.pack("!I", karuna)
    return (AWAFS_KIND, body)


def tcp_frame(bytes_sent=None, flow_size=None, sport=40000, dport=5001,
              payload=1000, tos=0, ipv6=False, seq=0, flags="PA",
              prev=None, src=None, karuna=None):
    """An Ethernet/IP/TCP frame, with the AWAFS option if 'bytes_sent' is
    given (a completion if 'flow_size' is given too, a report of the
    previous message if 'prev', the Karuna word 'karuna'), from 'src'
    (10.0.0.1 or fd00::1 by default)."""
    opts = ([] if bytes_sent is None
            else [awafs_option(bytes_sent, flow_size, prev, karuna)])
    l3 = (IPv6(src=src or "fd00::1", dst="fd00::2", tc=tos) if ipv6
          else IP(src=src or "10.0.0.1", dst="10.0.0.2", tos=tos))
    pkt = (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / l3
           / TCP(sport=sport, dport=dport, flags=flags, seq=seq,
                 options=opts) / (b"x" * payload))
    return bytes(pkt)


VXLAN_OVERHEAD = 50         # Outer Ethernet, IPv4, UDP and VXLAN headers.


def vxlan_frame(inner, vni=42, sport=50000):
    """'inner' (an Ethernet frame) in VXLAN (UDP 4789) over IPv4: 50 bytes
    more."""
    from scapy.layers.vxlan import VXLAN

    return bytes(Ether(src="02:00:00:00:01:01", dst="02:00:00:00:01:02")
                 / IP(src="192.168.1.1", dst="192.168.1.2")
                 / UDP(sport=sport, dport=4789) / VXLAN(vni=vni)
                 / Ether(inner))


def ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True,
                          text=True)


class VethPair:
    """'name' (the switch end, for net_af_packet) and 'name'p (the host end).
    IPv6 is off on both, so the kernel sends nothing of its own."""

    def __init__(self, name):
        self.sw, self.host = name, name + "p"
        ip("link", "del", self.sw, check=False)
        ip("link", "add", self.sw, "type", "veth", "peer", "name", self.host)
        for dev in (self.sw, self.host):
            with open(f"/proc/sys/net/ipv6/conf/{dev}/disable_ipv6", "w") as f:
                f.write("1")
            ip("link", "set", dev, "up")

    def delete(self):
        ip("link", "del", self.sw, check=False)

    def devargs(self, index):
        return f"net_af_packet{index},iface={self.sw}"


class RawPort:
    """A raw AF_PACKET socket on a host-side veth end."""

    def __init__(self, ifname):
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                  socket.htons(ETH_P_ALL))
        self.sock.bind((ifname, 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)

    def send(self, frames, gap=0.0):
        for f in frames:
            self.sock.send(f)
            if gap:
                time.sleep(gap)

    def close(self):
        self.sock.close()


class Capture:
    """Collects the frames arriving on a host-side veth end, in a thread,
    with their arrival times.  'match' selects frames (default: IPv4/IPv6
    TCP to port 5001)."""

    def __init__(self, ifname, match=None):
        self.port = RawPort(ifname)
        self.match = match or _is_test_tcp
        self.frames = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        sock = self.port.sock
        while not self._stop.is_set():
            r, _, _ = select.select([sock], [], [], 0.05)
            if r:
                data, addr = sock.recvfrom(65535)
                # PACKET_OUTGOING frames are ours; only count arrivals.
                if addr[2] != socket.PACKET_OUTGOING and self.match(data):
                    self.frames.append((time.time(), data))

    def wait_for(self, n, timeout):
        deadline = time.time() + timeout
        while len(self.frames) < n and time.time() < deadline:
            time.sleep(0.02)
        return len(self.frames) >= n

    def stop(self):
        self._stop.set()
        self._thread.join()
        self.port.close()
        return self.frames


def _is_test_tcp(data):
    if len(data) < 14:
        return False
    eth_type = struct.unpack("!H", data[12:14])[0]
    if eth_type == 0x0800:
        return data[23] == 6 and struct.unpack("!H", data[36:38])[0] == 5001
    if eth_type == 0x86DD:
        return data[20] == 6 and struct.unpack("!H", data[56:58])[0] == 5001
    return False


def parse_frame(data):
    """(sport, seq, bytes_sent or None, tos) of a captured test frame."""
    pkt = Ether(data)
    l3 = pkt[IP] if IP in pkt else pkt[IPv6]
    tcp = pkt[TCP]
    sent = None
    for kind, value in tcp.options:
        if kind == AWAFS_KIND and isinstance(value, bytes) and len(value) >= 6:
            sent = struct.unpack("!I", value[2:6])[0] & SENT_MAX
    tos = l3.tos if IP in pkt else l3.tc
    return tcp.sport, tcp.seq, sent, tos


def is_root():
    return os.geteuid() == 0

"""Writes a seed corpus for the header-parser fuzzer: valid frames with the
AWAFS option (IPv4/IPv6, 0-2 VLAN tags, data, completion and
previous-message forms, with and without the Karuna word, among other TCP
options), also inside VXLAN and Geneve tunnels over IPv4 and IPv6, so
fuzzing starts deep inside the parser."""

import struct
import sys
from pathlib import Path

from testbed.traffic import AWAFS_EXID as EXID, AWAFS_KIND as KIND


def awafs_option(sent, size=None, prev=None, karuna=None):
    """'prev': (size, end sequence number) of the previous message;
    'karuna': the Karuna word (deadline ms << 20 | size KB)."""
    word = sent if size is None else sent | 1 << 31
    body = struct.pack("!I", word) + (b"" if size is None
                                      else struct.pack("!I", size))
    if prev is not None:
        body += struct.pack("!II", *prev)
    if karuna is not None:
        body += struct.pack("!I", karuna)
    return struct.pack("!BBH", KIND, 4 + len(body), EXID) + body


def frame(ipv6, vlans, opts, payload=b"x" * 10):
    tcp_opts = opts + b"\x00" * (-len(opts) % 4)
    doff = (20 + len(tcp_opts)) // 4
    tcp = struct.pack("!HHIIBBHHH", 40000, 5001, 1, 0, doff << 4, 0x18,
                      65535, 0, 0) + tcp_opts + payload
    if ipv6:
        l3 = struct.pack("!IHBB", 6 << 28, len(tcp), 6, 64) + bytes(32)
        eth_type = 0x86DD
    else:
        l3 = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000,
                         64, 6, 0, bytes(4), bytes(4))
        eth_type = 0x0800
    eth = bytes(12)
    for i in range(vlans):
        eth += struct.pack("!HH", 0x88A8 if i == 0 and vlans > 1 else 0x8100,
                           100 + i)
    return eth + struct.pack("!H", eth_type) + l3 + tcp


def encap(inner, geneve=False, ipv6=False, vni=5, options=b""):
    """'inner' in VXLAN or Geneve (with 'options'), over IPv4 or IPv6, as
    OVS's userspace tunnels send it."""
    if geneve:
        tunnel = struct.pack("!BBHI", len(options) // 4, 0, 0x6558,
                             vni << 8) + options
    else:
        tunnel = struct.pack("!BxxxI", 0x08, vni << 8)
    udp_len = 8 + len(tunnel) + len(inner)
    udp = struct.pack("!HHHH", 50000, 6081 if geneve else 4789, udp_len, 0)
    if ipv6:
        l3 = struct.pack("!IHBB", 6 << 28 | 1 << 20, udp_len, 17, 64) \
            + bytes(32)
    else:
        l3 = struct.pack("!BBHHHBBH4s4s", 0x45, 1, 20 + udp_len, 0, 0x4000,
                         64, 17, 0, bytes(4), bytes(4))
    eth = bytes(12) + struct.pack("!H", 0x86DD if ipv6 else 0x0800)
    return eth + l3 + udp + tunnel + inner


def seeds():
    other = b"\x02\x04\x05\xb4\x01\x01\x08\x0a" + bytes(8)
    for ipv6 in (False, True):
        for vlans in (0, 1, 2):
            yield frame(ipv6, vlans, awafs_option(1000))
            yield frame(ipv6, vlans, other + awafs_option(5, 9000))
            yield frame(ipv6, vlans, awafs_option(0, prev=(4000, 1)))
            yield frame(ipv6, vlans, awafs_option(0, 10, prev=(7, 1)))
            yield frame(ipv6, vlans, awafs_option(1000, karuna=20 << 20))
            yield frame(ipv6, vlans, other + awafs_option(5, 9000,
                                                          karuna=300))
            yield frame(ipv6, vlans, awafs_option(0, 10, prev=(7, 1),
                                                  karuna=1 << 20 | 1))
    inner = frame(False, 1, awafs_option(5, 9000))
    for ipv6 in (False, True):
        yield encap(inner, ipv6=ipv6)
        yield encap(frame(True, 0, awafs_option(1000)), geneve=True,
                    ipv6=ipv6, options=bytes(8))
    yield encap(encap(inner), geneve=True)


def main(outdir):
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(seeds()):
        (out / f"seed-{i:02d}").write_bytes(data)


if __name__ == "__main__":
    main(sys.argv[1])

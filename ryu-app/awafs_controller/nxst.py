"""NXST_AWAFS, the Nicira vendor multipart message that reads a bridge's
AWAFS state (docs/openflow.md): the request body, the reply's decoder and
the text 'ovs-ofctl dump-awafs' prints for it."""

import struct
from dataclasses import dataclass, field

from awafs_controller.props import PROPS

NX_VENDOR_ID = 0x00002320
EXP_TYPE = 10
OFPP_ANY = 0xffffffff
PORT_QOS = 0xffffffff           # queue_id of an entry for the port itself.

OF13_VERSION = 0x04
OFPT_MULTIPART_REPLY = 19
OFPMP_EXPERIMENTER = 0xffff

_OF_HEADER = struct.Struct("!BBHI")
_MULTIPART = struct.Struct("!HH4xII")   # type, flags; experimenter, subtype.
_ENTRY = struct.Struct("!H2xII4x")      # length; port_no, queue_id.
_PROP = struct.Struct("!HH4x")          # type, length.


class DecodeError(ValueError):
    pass


@dataclass
class Entry:
    port_no: int
    queue_id: int | None        # None: the port's QoS.
    values: dict = field(default_factory=dict)  # qos/show key -> text.


def request_body(port_no=OFPP_ANY):
    return struct.pack("!I4x", port_no)


def decode_entries(body):
    """The entries of a reply body (several replies' bodies may be
    concatenated: replies split at entry boundaries)."""
    entries, ofs = [], 0
    while ofs < len(body):
        if len(body) - ofs < _ENTRY.size:
            raise DecodeError(f"{len(body) - ofs} bytes left, less than an "
                              "entry header")
        length, port_no, queue_id = _ENTRY.unpack_from(body, ofs)
        if length < _ENTRY.size or length % 8 or ofs + length > len(body):
            raise DecodeError(f"entry at {ofs}: bad length {length}")
        entry = Entry(port_no, None if queue_id == PORT_QOS else queue_id)
        _decode_props(body[ofs + _ENTRY.size:ofs + length], entry.values)
        entries.append(entry)
        ofs += length
    return entries


def _decode_props(buf, values):
    ofs = 0
    while ofs < len(buf):
        if len(buf) - ofs < _PROP.size:
            raise DecodeError("truncated property header")
        ptype, length = _PROP.unpack_from(buf, ofs)
        if length < _PROP.size or length % 8 or ofs + length > len(buf):
            raise DecodeError(f"property {ptype}: bad length {length}")
        prop = PROPS.get(ptype)
        if prop:                # Unknown properties are skipped.
            n = (length - _PROP.size) // 8
            vals = struct.unpack_from(f"!{n}Q", buf, ofs + _PROP.size)
            values[prop.key] = prop.render(vals)
        ofs += length


def decode_message(msg):
    """The entries of one whole OpenFlow 1.3 NXST_AWAFS reply message."""
    if len(msg) < _OF_HEADER.size + _MULTIPART.size:
        raise DecodeError("shorter than an experimenter multipart reply")
    version, msg_type, length, _ = _OF_HEADER.unpack_from(msg)
    mp_type, _, vendor, subtype = _MULTIPART.unpack_from(msg,
                                                         _OF_HEADER.size)
    if (version, msg_type, mp_type, vendor, subtype) != (
            OF13_VERSION, OFPT_MULTIPART_REPLY, OFPMP_EXPERIMENTER,
            NX_VENDOR_ID, EXP_TYPE):
        raise DecodeError("not an OpenFlow 1.3 NXST_AWAFS reply")
    if length != len(msg):
        raise DecodeError(f"header says {length} bytes, message has "
                          f"{len(msg)}")
    return decode_entries(msg[_OF_HEADER.size + _MULTIPART.size:])


def render_dump(entries):
    """The lines 'ovs-ofctl dump-awafs' prints below its header line."""
    lines = []
    for e in entries:
        kv = "".join(f" {k}={v}" for k, v in e.values.items())
        if e.queue_id is None:
            lines.append(f" port {e.port_no}:{kv}")
        else:
            lines.append(f"  queue {e.queue_id}:{kv}")
    return "\n".join(lines) + "\n" if lines else ""

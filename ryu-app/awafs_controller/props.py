"""The NXST_AWAFS property table, read from ofproto-ext/awafs-props.def,
the file the switch's C code includes (docs/openflow.md)."""

import re
from dataclasses import dataclass
from pathlib import Path

# defs/ links to the switch's file in the source tree; packages carry the
# file itself (packages/).
DEF_FILE = Path(__file__).parent / "defs" / "awafs-props.def"

_LINE = re.compile(r'^AWAFS_PROP\(\s*(\d+)\s*,\s*(PORT|QUEUE)\s*,\s*"([^"]+)"'
                   r'\s*,\s*(U64|LIST|PCT|ENUM)\s*,\s*"([^"]*)"\s*\)',
                   re.M)


@dataclass(frozen=True)
class Prop:
    type: int
    scope: str          # "PORT" or "QUEUE".
    key: str            # The key 'ovs-appctl qos/show' prints.
    kind: str           # "U64", "LIST", "PCT" or "ENUM".
    names: tuple        # ENUM: the name of each index.

    def render(self, values):
        """The values as 'ovs-appctl qos/show' prints them."""
        if self.kind == "PCT":
            return ",".join("%g" % (v / 1000) for v in values)
        if self.kind == "ENUM":
            return ",".join(self.names[v] if v < len(self.names) else str(v)
                            for v in values)
        return ",".join(str(v) for v in values)


def parse(text):
    """{type: Prop} from the text of an awafs-props.def."""
    props = {}
    for m in _LINE.finditer(text):
        names = tuple(m.group(5).split(",")) if m.group(5) else ()
        prop = Prop(int(m.group(1)), m.group(2), m.group(3), m.group(4),
                    names)
        props[prop.type] = prop
    return props


PROPS = parse(DEF_FILE.read_text())

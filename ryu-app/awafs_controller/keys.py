"""The awafs QoS type's keys, read from netdev-ext/netdev-dpdk-awafs-keys.def,
the table the switch's C code includes: the controller validates with it and
vswitchd-conf/README.md's table is written from it (python -m
awafs_controller.keys)."""

import re
from dataclasses import dataclass
from pathlib import Path

# defs/ links to the switch's file in the source tree; packages carry the
# file itself (packages/).
DEF_FILE = Path(__file__).parent / "defs" / "netdev-dpdk-awafs-keys.def"

# A C string literal, a parenthesised group, or a bare word.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\(|\)|,|[^\s",()]+')


@dataclass(frozen=True)
class Key:
    name: str
    type: str           # "UINT", "ENUM", "BYTES" or "PCT".
    min: int
    max: int
    choices: tuple      # ENUM: the names it takes, in the switch's order.
    default: str        # As written; a UINT's that is not a number is
                        # computed by the switch.
    doc: str

    def default_value(self):
        """The default as a UINT's integer, or None if it is computed."""
        return int(self.default) if self.default.isdigit() else None

    def values(self):
        """What the key takes, in words (README)."""
        if self.type == "UINT":
            return f"{self.min}–{self.max}"
        if self.type == "ENUM":
            return ", ".join(f"`{c}`" for c in self.choices)
        if self.type == "BYTES":
            return f"byte counts ({self.min}–{self.max})"
        return f"percentiles in ({self.min}, {self.max})"


def _string(token):
    return bytes(token[1:-1], "utf-8").decode("unicode_escape")


def _args(tokens):
    """The top-level arguments of a macro call's token list, each a list of
    tokens."""
    args, depth, cur = [], 0, []
    for t in tokens:
        if t == "," and depth == 0:
            args.append(cur)
            cur = []
            continue
        depth += (t == "(") - (t == ")")
        cur.append(t)
    args.append(cur)
    return args


def parse(text):
    """[Key] from the text of a netdev-dpdk-awafs-keys.def, in its order."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    keys = []
    for body in re.findall(r"^AWAFS_QOS_KEY\((.*?)\)\s*$(?=\s*(?:^AWAFS|\Z))",
                           text, re.S | re.M):
        args = _args(_TOKEN.findall(body))
        _, name, type_, lo, hi, choices, default, doc = args
        keys.append(Key(
            name=_string(name[0]), type=type_[0], min=int(lo[0]),
            max=int(hi[0]),
            choices=tuple(_string(t) for t in choices if t.startswith('"')),
            default=_string(default[0]),
            doc="".join(_string(t) for t in doc)))
    return keys


KEYS = parse(DEF_FILE.read_text())
BY_NAME = {k.name: k for k in KEYS}


# The table is ASCII, as C sources are; the README typesets it.
_TYPESET = (("*k*-", "*k*−"), ("...", "…"), ("kappa", "κ"), ("{beta}", "{β}"),
            (" us ", " µs "))


def _typeset(text):
    for ascii_, typeset in _TYPESET:
        text = text.replace(ascii_, typeset)
    return text


def markdown_table():
    """vswitchd-conf/README.md's table of keys."""
    lines = ["| key | values | default | meaning |", "|---|---|---|---|"]
    for k in KEYS:
        default = (f"`{k.default}`" if k.type == "ENUM" else k.default)
        lines.append(_typeset(f"| `{k.name}` | {k.values()} | {default} | "
                              f"{k.doc} |"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")

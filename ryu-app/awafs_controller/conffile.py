"""The controller's configuration file (ryu-app/README.md, "Configuration
file"): the command line's options as 'key = value' lines under
[controller], and one 'DPID = REMOTE' line per switch under [ovsdb]:

    [controller]
    ofp-port = 6653
    rest = 127.0.0.1:8080

    [ovsdb]
    0000000000000001 = unix:/var/run/openvswitch/db.sock

Read into the command line it stands for, each value checked by the
option's own parser, so that a broken file is refused at start, naming its
line and the reason."""

import argparse

BOOLEANS = {"true": True, "yes": True, "on": True, "1": True,
            "false": False, "no": False, "off": False, "0": False}


class ConfError(Exception):
    """A broken file: str() is 'FILE:LINE: reason'."""


def to_argv(path, options, ovsdb):
    """The command-line words that the file at 'path' stands for.
    'options' maps each option a file may set under [controller] to the
    function that checks its value (the argparse 'type'), or to None for a
    switch (true or false); 'ovsdb' checks a [ovsdb] line's
    "DPID=REMOTE"."""
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfError(f"{path}: {e}") from None
    argv, section, seen = [], None, {}
    for number, raw in enumerate(lines, 1):
        def fail(reason):
            raise ConfError(f"{path}:{number}: {reason}")
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                fail(f"'{line}': a section is [NAME]")
            section = line[1:-1].strip()
            if section not in ("controller", "ovsdb"):
                fail(f"unknown section [{section}] (known: [controller], "
                     "[ovsdb])")
            continue
        key, sep, value = (part.strip() for part in line.partition("="))
        if not sep or not key:
            fail(f"'{line}': not 'key = value'")
        if section is None:
            fail(f"'{key}' outside a section")
        if section == "ovsdb":
            check(ovsdb, f"{key}={value}", fail)
            argv += ["--ovsdb", f"{key}={value}"]
            continue
        if key not in options:
            fail(f"unknown option '{key}' (known: {', '.join(options)})")
        if key in seen:
            fail(f"'{key}' is already set on line {seen[key]}")
        seen[key] = number
        if options[key] is None:
            if value.lower() not in BOOLEANS:
                fail(f"{key}: '{value}' is not true or false")
            argv += [f"--{key}"] if BOOLEANS[value.lower()] else []
            continue
        check(options[key], value, fail)
        argv += [f"--{key}", value]
    return argv


def check(parser, value, fail):
    try:
        parser(value)
    except (ValueError, argparse.ArgumentTypeError) as e:
        fail(str(e))

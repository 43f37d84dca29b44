"""The AWAFS TCP option's constants have one definition, the AWAFS_OPT_*
lines of lib/awafs.h (docs/header.md): the BPF programs get them from the
Makefile as -D flags, the Python tools read the file.  No other source
spells the option's ExID."""

import subprocess

from tests.conftest import REPO
from testbed.traffic import core_constants

SOURCES = ("*.c", "*.h", "*.py", "*.sh")


def test_only_lib_awafs_h_spells_the_options_exid():
    exid = core_constants()["AWAFS_OPT_EXID"]
    forms = (hex(exid), str(exid))
    found = sorted(
        str(path.relative_to(REPO))
        for pattern in SOURCES for path in REPO.rglob(pattern)
        if "build" not in path.relative_to(REPO).parts
        and any(f in path.read_text(errors="replace").lower() for f in forms))
    assert found == ["lib/awafs.h"], found


def test_bpf_flags_and_python_read_the_same_definition():
    flags = subprocess.run(["make", "-s", "-C", str(REPO), "-pn"],
                           capture_output=True, text=True).stdout
    line = next(ln for ln in flags.splitlines()
                if ln.startswith("AWAFS_OPT_DEFS :="))
    defs = dict(f[2:].split("=") for f in line.split(":=")[1].split())
    core = core_constants()
    assert defs and all(int(v, 0) == core[k] for k, v in defs.items()), \
        (defs, core)
    assert {"AWAFS_OPT_KIND", "AWAFS_OPT_EXID", "AWAFS_OPT_LEN",
            "AWAFS_OPT_COMPLETED_BIT"} <= set(defs)

"""Every patch of the series, and every OVS-side source file the series
builds (netdev-ext/, ofproto-ext/), passes Open vSwitch's own style checker,
utilities/checkpatch.py of the unpacked 3.1.0 tree, with no error and no
warning, as a maintainer would run it on a submission."""

import subprocess
import sys

import pytest

from tests.conftest import BUILD, REPO

SERIES = [line.strip() for line in
          (REPO / "ovs-patches" / "series").read_text().splitlines()
          if line.strip() and not line.startswith("#")]


OVS_SIDE_SOURCES = sorted(
    str(p.relative_to(REPO))
    for d in ("netdev-ext", "ofproto-ext")
    for p in (REPO / d).iterdir() if p.suffix in (".c", ".h"))


def checkpatch(*args):
    checker = BUILD / "ovs" / "utilities" / "checkpatch.py"
    assert checker.exists(), f"{checker} missing: run `make`"
    proc = subprocess.run([sys.executable, str(checker), *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "WARNING" not in proc.stdout, \
        proc.stdout + proc.stderr


@pytest.mark.parametrize("patch", SERIES)
def test_checkpatch(patch):
    checkpatch(str(REPO / "ovs-patches" / patch))


@pytest.mark.parametrize("path", OVS_SIDE_SOURCES)
def test_checkpatch_source_file(path):
    checkpatch("-f", str(REPO / path))

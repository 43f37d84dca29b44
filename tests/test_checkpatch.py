"""Every patch of the series passes Open vSwitch's own style checker,
utilities/checkpatch.py of the unpacked 3.1.0 tree, with no error and no
warning, as a maintainer would run it on a submission."""

import subprocess
import sys

import pytest

from conftest import BUILD, REPO

SERIES = [line.strip() for line in
          (REPO / "ovs-patches" / "series").read_text().splitlines()
          if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("patch", SERIES, ids=lambda p: p[:4])
def test_checkpatch(patch):
    checker = BUILD / "ovs" / "utilities" / "checkpatch.py"
    assert checker.exists(), f"{checker} missing: run `make`"
    proc = subprocess.run([sys.executable, str(checker),
                           str(REPO / "ovs-patches" / patch)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "WARNING" not in proc.stdout, \
        proc.stdout + proc.stderr

"""Runs the C unit tests of the AWAFS core (cmocka, built by `make`)."""

import subprocess

import pytest

from conftest import BUILD, REPO

UNIT_SOURCES = sorted((REPO / "tests" / "unit").glob("test-*.c"))


@pytest.mark.parametrize("src", UNIT_SOURCES, ids=lambda p: p.stem)
def test_c_unit(src):
    binary = BUILD / "core" / "tests" / src.stem
    assert binary.exists(), f"{binary} missing: run `make`"
    proc = subprocess.run([str(binary)], capture_output=True, text=True,
                          timeout=120)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "[  PASSED  ]" in output and "FAILED" not in output, output

"""Runs the C unit tests of the AWAFS core (cmocka, built by `make`)."""

import subprocess

import pytest

from tests.conftest import BUILD, REPO

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


def test_core_compiles_for_32_bit_targets():
    """The core builds wherever OVS builds, 32-bit x86 included (no 128-bit
    arithmetic): every source with -m32 and the core's warnings as errors
    (the headers of gcc-multilib, installed by setup)."""
    for src in sorted((REPO / "lib").glob("awafs-*.c")):
        proc = subprocess.run(
            ["gcc", "-m32", "-std=gnu11", "-fsyntax-only", "-Wall", "-Wextra",
             "-Wno-sign-compare", "-Werror", f"-I{REPO / 'lib'}", str(src)],
            capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr

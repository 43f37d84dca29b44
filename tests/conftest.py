"""Paths shared by the AWAFS test suite."""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))       # For the testbed package.
BUILD = REPO / "build"
BIN = BUILD / "bin"


@pytest.fixture(scope="session")
def workloads():
    from testbed.workload import workloads_dir

    path = workloads_dir()
    if not path.is_dir():
        pytest.fail(f"workload CDFs not found in {path} "
                    "(set AWAFS_SHARED to the shared/ folder)")
    return path

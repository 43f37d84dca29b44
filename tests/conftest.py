"""Paths shared by the AWAFS test suite."""

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))       # For the testbed package.
BUILD = REPO / "build"
BIN = BUILD / "bin"
SHARED = Path(os.environ.get("AWAFS_SHARED", REPO.parent / "shared"))
WORKLOADS = SHARED / "workloads"


@pytest.fixture(scope="session")
def workloads():
    if not WORKLOADS.is_dir():
        pytest.fail(f"workload CDFs not found in {WORKLOADS} "
                    "(set AWAFS_SHARED to the shared/ folder)")
    return WORKLOADS

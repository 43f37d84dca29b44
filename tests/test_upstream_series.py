"""The series as upstream would get it (`make upstream-series`): applied
with `git am` to a clean stock Open vSwitch 3.1.0 tree, with no file from
outside it, it builds with OVS's -Werror, the awafs cases of OVS's own
testsuites pass there (the core's unit tests through ovstest, the
NXST_AWAFS printing, the type in the DPDK testsuite), and OVS's checks of a
git tree (config.h first, printf modifiers, thread-unsafe calls, tabs, ...)
find nothing in the files the series adds or changes.

Those checks run in `make` only in a git tree, where they also list files
of Debian's packaging in the tarball (debian/changelog mentions ifconfig);
so the tree is built with its git directory set aside, and the checks are
run on their own with it, counting only the series' files."""

import os
import subprocess

import pytest

from tests.conftest import BUILD, REPO
from tests.test_ovs_testsuite import run_testsuite

TARBALL = "/usr/src/openvswitch/openvswitch.tar.gz"
GIT_ASIDE = "git-aside"
# OVS's checks of a git tree (Makefile.am's ALL_LOCAL).
TREE_CHECKS = ["config-h-check", "printf-check", "static-check",
               "check-assert-h-usage", "check-endian", "check-echo-n",
               "check-tabs", "thread-safety-check", "check-ifconfig"]


def sh(cwd, *cmd, timeout=1800, log=None):
    with open(log or os.devnull, "w") as out:
        proc = subprocess.run(cmd, cwd=cwd, stdout=out,
                              stderr=subprocess.STDOUT, timeout=timeout)
    assert proc.returncode == 0, (cmd, log and open(log).read()[-3000:])


@pytest.fixture(scope="module")
def stock_tree_with_series(tmp_path_factory):
    """A stock tree, the generated series applied with git am, built."""
    series = tmp_path_factory.mktemp("series")
    sh(REPO, "build-aux/upstream-series.sh", TARBALL, str(series))
    tree = tmp_path_factory.mktemp("ovs")
    sh(tree, "tar", "xzf", TARBALL, "--strip-components=1")
    env = ["-c", "user.name=AWAFS test", "-c", "user.email=test@example.org"]
    sh(tree, "git", "init", "-q")
    sh(tree, "git", "add", "-A")
    sh(tree, "git", *env, "commit", "-qm", "Open vSwitch 3.1.0")
    patches = sorted(str(p) for p in series.glob("*.patch"))
    assert len(patches) >= 20
    sh(tree, "git", *env, "am", "-q", *patches)
    (tree / ".git").rename(tree / GIT_ASIDE)
    log = str(BUILD / "upstream-build.log")
    sh(tree, "./boot.sh", log=log)
    sh(tree, "./configure", "--with-dpdk=shared", "--enable-Werror",
       log=log)
    sh(tree, "make", f"-j{os.cpu_count()}", log=log, timeout=3600)
    return tree


def test_series_applies_builds_and_passes_awafs_cases(
        stock_tree_with_series):
    text = run_testsuite("check", "-j2 -k awafs", "upstream-testsuite.log",
                         11, 900, ovs=stock_tree_with_series)
    assert "awafs core - strict-priority queues" in text
    version = subprocess.run(
        [str(stock_tree_with_series / "vswitchd" / "ovs-vswitchd"),
         "--version"], capture_output=True, text=True).stdout
    assert "+awafs" not in version     # The packaging patch stays out.


def test_series_passes_the_dpdk_testsuite_awafs_cases(
        stock_tree_with_series):
    run_testsuite("check-dpdk", "-k awafs", "upstream-dpdk-testsuite.log", 3,
                  900, ovs=stock_tree_with_series)


def test_ovs_tree_checks_find_nothing_in_the_series_files(
        stock_tree_with_series):
    tree = stock_tree_with_series
    (tree / GIT_ASIDE).rename(tree / ".git")
    try:
        def git(*args):
            return subprocess.run(["git", *args], cwd=tree,
                                  capture_output=True, text=True,
                                  check=True).stdout

        stock = git("rev-list", "--max-parents=0", "HEAD").strip()
        touched = set(git("diff", "--name-only", stock, "HEAD").split())
        found = {}
        for check in TREE_CHECKS:
            out = subprocess.run(["make", "-s", check], cwd=tree,
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                path = line.split(":")[0]
                if path in touched:
                    found.setdefault(check, []).append(line)
    finally:
        (tree / ".git").rename(tree / GIT_ASIDE)
    assert len(touched) > 40
    assert not found, found

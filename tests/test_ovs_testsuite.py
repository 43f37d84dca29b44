"""Open vSwitch's own tests for the code the patch series touches: the
userspace datapath (send path, PMD loop, tx steering), QoS queues, the
NXST_AWAFS printing and set_queue's priorities, and the version every
program reports (unixctl, C and Python); and the series' own tests of the
awafs type in OVS's DPDK testsuite (system-dpdk.at, on net_null ports).
docs/testing.md lists the keywords."""

import re
import subprocess


from conftest import BUILD
from ovs_check_all import failed_titles

KEYWORDS = ["dpif-netdev", "pmd", "queue", "awafs", "DSCP", "flood", "unixctl"]


def run_testsuite(target, flags, log_name, at_least, timeout,
                  ovs=BUILD / "ovs"):
    """Runs 'make TARGET' with TESTSUITEFLAGS 'flags' in the OVS tree 'ovs'
    (the build's by default); asserts that it passed and ran 'at_least'
    tests, none skipped."""
    log = BUILD / log_name
    with open(log, "w") as out:
        proc = subprocess.run(["make", "-C", str(ovs), target,
                               f"TESTSUITEFLAGS={flags}"],
                              stdout=out, stderr=subprocess.STDOUT,
                              timeout=timeout)
    text = log.read_text()
    assert proc.returncode == 0, text[-3000:]
    m = re.search(r"All (\d+) tests were successful", text)
    assert m and int(m.group(1)) >= at_least, text[-3000:]
    assert not re.search(r"tests? w[ae]re skipped", text), text[-3000:]
    return text


def test_ovs_testsuite_for_patched_areas():
    run_testsuite("check", "-j2 " + " ".join(f"-k {k}" for k in KEYWORDS),
                  "ovs-testsuite.log", 70, 1800)


def test_core_unit_tests_through_ovstest():
    """The core's unit tests, built into OVS's ovstest without cmocka
    (tests/unit/awafs-unit.h stands in for it there): one testsuite case
    per module, none skipped."""
    text = run_testsuite("check", "-k awafs-unit", "ovs-unit-testsuite.log",
                         9, 600)
    assert "awafs core - strict-priority queues" in text


def test_ovs_dpdk_testsuite_for_awafs():
    """OVS's DPDK testsuite starts its own ovs-vswitchd with DPDK, one test
    at a time; the awafs cases need no hugepages (--no-huge)."""
    run_testsuite("check-dpdk", "-k awafs", "ovs-dpdk-testsuite.log", 3, 900)


def test_check_ovs_counts_failed_not_skipped_tests():
    """make check-ovs's reading of an autotest summary: the failed tests'
    titles, not the skipped ones listed after them."""
    log = ("## Summary of the failures. ##\nFailed tests:\n"
           " NUM: FILE-NAME:LINE     TEST-GROUP-NAME\n"
           " 943: ofproto.at:2243    ofproto - hidden rules not in table "
           "stats\n\nSkipped tests:\n"
           " 159: daemon.at:212      daemon --service\n"
           "## Detailed failed tests. ##\n")
    assert failed_titles(log) == {"ofproto - hidden rules not in table stats"}


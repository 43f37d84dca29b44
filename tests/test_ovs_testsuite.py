"""Open vSwitch's own tests for the code the patch series touches: the
userspace datapath (send path, PMD loop, tx steering), QoS queues, the
NXST_AWAFS printing and set_queue's priorities, and the version every
program reports (unixctl, C and Python); and the series' own tests of the
awafs type in OVS's DPDK testsuite (system-dpdk.at, on net_null ports).
docs/testing.md lists the keywords."""

import re
import subprocess

from tests.conftest import BUILD
from tests.ovs_check_all import failures, known_failures, run, verdict

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


SUMMARY = ("## Summary of the failures. ##\nFailed tests:\n"
           " NUM: FILE-NAME:LINE     TEST-GROUP-NAME\n"
           " 943: ofproto.at:2243    ofproto - hidden rules not in table "
           "stats\n 1993: ovsdb-cluster.at:10   ovsdb relay\n\n"
           "Skipped tests:\n"
           " 159: daemon.at:212      daemon --service\n"
           "## Detailed failed tests. ##\n")
KNOWN = known_failures("# comment\n943: ofproto - hidden rules not in "
                       "table stats\n")


def test_check_ovs_counts_failed_not_skipped_tests():
    """make check-ovs's reading of an autotest summary: the failed tests'
    numbers and titles, not the skipped ones listed after them."""
    assert failures(SUMMARY) == {
        943: "ofproto - hidden rules not in table stats",
        1993: "ovsdb relay"}


def test_check_ovs_prints_every_first_run_failure():
    """A test that failed in the parallel run and passed alone is printed,
    and not a failure; one that fails again and is not known is."""
    first = failures(SUMMARY)
    lines, failed = verdict(first, {943: first[943]}, KNOWN)
    assert "failed in the parallel run: 1993: ovsdb relay" in lines
    assert "passed alone: 1993: ovsdb relay" in lines
    assert not failed
    lines, failed = verdict(first, first, KNOWN)
    assert failed and "NEW FAILURE: 1993: ovsdb relay" in lines


def test_check_ovs_matches_known_failures_by_number_and_title():
    """The known failure's title under another number, or another title
    under its number, is a new failure; the known one passing is said."""
    title = "ofproto - hidden rules not in table stats"
    assert verdict({943: title}, {943: title}, KNOWN) == (
        ["failed in the parallel run: 943: " + title], False)
    for again in ({944: title}, {943: "another test"}):
        lines, failed = verdict(again, again, KNOWN)
        assert failed, again
    lines, failed = verdict({}, {}, KNOWN)
    assert lines == ["known failure passed: 943: " + title] and not failed


def test_check_ovs_refuses_a_stale_log(tmp_path):
    """A 'make check' that fails before the testsuite starts leaves no log
    to read: the earlier run's is removed first."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "testsuite.log").write_text(
        "2544 tests were successful.\n")
    (tmp_path / "Makefile").write_text("check:\n\tfalse\n")
    status, log = run(tmp_path, "-j2")
    assert status and log is None
    assert not (tmp_path / "tests" / "testsuite.log").exists()

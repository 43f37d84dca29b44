"""Open vSwitch's own tests for the code the patch series touches: the
userspace datapath (send path, PMD loop, tx steering), QoS queues, the
NXST_AWAFS printing and set_queue's priorities, and the version every
program reports (unixctl, C and Python).  The
DPDK QoS tests of OVS (system-dpdk.at) need a physical NIC or vhost peers,
so the awafs type itself is covered by test_datapath.py.  docs/testing.md
lists the keywords."""

import re
import subprocess

from conftest import BUILD

KEYWORDS = ["dpif-netdev", "pmd", "queue", "awafs", "DSCP", "flood", "unixctl"]


def test_ovs_testsuite_for_patched_areas():
    flags = "-j2 " + " ".join(f"-k {k}" for k in KEYWORDS)
    log = BUILD / "ovs-testsuite.log"
    with open(log, "w") as out:
        proc = subprocess.run(["make", "-C", str(BUILD / "ovs"), "check",
                               f"TESTSUITEFLAGS={flags}"],
                              stdout=out, stderr=subprocess.STDOUT,
                              timeout=1800)
    text = log.read_text()
    assert proc.returncode == 0, text[-3000:]
    m = re.search(r"All (\d+) tests were successful", text)
    assert m and int(m.group(1)) >= 50, text[-3000:]

"""Paths and fixtures shared by the AWAFS test suite, and its one check
that it runs as root."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build"
BIN = BUILD / "bin"


def pytest_sessionstart(session):
    """Most tests need root (DPDK hugepages, network namespaces, veth
    pairs, BPF): without it the run stops here rather than skip them."""
    if os.geteuid() != 0:
        pytest.exit("the AWAFS tests need root (DPDK hugepages, network "
                    "namespaces, veth pairs, BPF): run make check as root",
                    returncode=4)


@pytest.fixture(scope="session", autouse=True)
def one_test_run_per_machine():
    """A second pytest run (or a soak) waits for the first."""
    from testbed.ovs_sandbox import one_switch_per_machine

    with one_switch_per_machine():
        yield


@pytest.fixture(scope="session")
def workloads():
    from testbed.workload import workloads_dir

    path = workloads_dir()
    if not path.is_dir():
        pytest.fail(f"workload CDFs not found in {path} "
                    "(set AWAFS_SHARED to the shared/ folder)")
    return path


# ---- the two-port switch (testbed/switch.py) ----

@pytest.fixture(scope="module")
def switch():
    """p0 -> p1 on a sandboxed switch, per module; AWAFS_TEST_VSWITCHD runs
    it on another ovs-vswitchd binary (an older build, say)."""
    from testbed.switch import Switch

    sw = Switch(vswitchd=os.environ.get("AWAFS_TEST_VSWITCHD"))
    yield sw
    sw.close()


@pytest.fixture
def sw(switch):
    """The module's switch, with no QoS on p1, p1 up and no PMD sleep after
    the test, which fails if ovs-vswitchd exited badly or logged an error
    the test did not expect (sb.allow_log())."""
    yield switch
    problems = switch.sb.problems()
    switch.clear_qos()
    switch.sb.ofctl("mod-port", "br0", "p1", "up")
    switch.sb.vsctl("remove", "open_vswitch", ".", "other_config",
                    "pmd-maxsleep")
    if problems:
        pytest.fail("ovs-vswitchd:\n" + "\n".join(problems))


# ---- end hosts: namespaces on the switch, a cgroup, an exact window ----

@pytest.fixture(scope="module")
def hosts():
    """h1 and h2 on a sandboxed switch (testbed/hosts.py), per module."""
    from testbed.hosts import HostPair

    hp = HostPair()
    yield hp
    hp.close()


@pytest.fixture
def cgroup():
    """A cgroup v2 directory, with the host agent detached afterwards."""
    from tests.endhosts import agent
    from testbed.hosts import Cgroup

    cg = Cgroup("awafs-test")
    yield cg
    agent("detach", "--cgroup", str(cg.path), check=False)
    cg.delete()


@pytest.fixture
def qos(hosts):
    """An exact-window awafs on p2 whose 8 queues' thresholds are the
    endhosts.PCTS percentiles of every completion of the test."""
    from tests.endhosts import PCTS

    hosts.sb.set_awafs("p2", queues=8,
                       percentiles=",".join(map(str, PCTS)),
                       **{"window-type": "exact", "window-ms": 60000,
                          "min-samples": 1, "interval-ms": 100})
    yield hosts.sb
    hosts.sb.vsctl("clear", "port", "p2", "qos", "--", "--all", "destroy",
                   "qos")

"""make check-deb: the packages of 'make deb' on a throwaway Debian 12.

A root made by mmdebstrap from Debian's packages gets Debian's own Open
vSwitch first, then this project's packages from a local apt repository
(apt must prefer them), runs them with the packages' init scripts (this
machine's PID 1 is not systemd), configures an awafs QoS on a DPDK null
port, reads it back with ovs-appctl and ovs-ofctl and through the
controller's REST API, goes back to Debian's packages and purges
everything, leaving nothing running.  The tests run in order and share the
root; each takes over where the one before it stopped."""

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from testbed.ovs_sandbox import ensure_hugepages, one_switch_per_machine
from tests.conftest import REPO

DEBS = REPO / "build" / "deb"
ROOT = REPO / "build" / "deb-root"
SOURCES = Path("/etc/apt/sources.list.d/debian.sources")
REPO_IN_ROOT = "/srv/awafs-debs"
DPID = "0000000000000001"
# Debian's DPDK switch: the packages a DPDK host installs.
SWITCH = ["openvswitch-common", "openvswitch-switch",
          "openvswitch-switch-dpdk", "python3-openvswitch"]
OURS = ["awafs-host", "awafs-controller"]
WAIT = 60
# A REST client in the root (it has python3, not curl): METHOD URL [JSON].
REST_CLIENT = """import sys, urllib.request
method, url, body = (sys.argv[1:] + [None])[:3]
request = urllib.request.Request(
    url, method=method, data=body and body.encode(),
    headers={"Content-Type": "application/json"})
sys.stdout.write(urllib.request.urlopen(request).read().decode())
"""


def versions():
    text = (REPO / "packages" / "version.sh").read_text()
    base = re.search(r"^OVS_BASE_VERSION=(\S+)", text, re.M).group(1)
    return base, base + re.search(r"^OVS_DEB_VERSION=\$OVS_BASE_VERSION"
                                  r"(\S+)", text, re.M).group(1)


STOCK, AWAFS = versions()


# PID 1 of the root's namespace: it reaps what daemons leave behind, or
# start-stop-daemon would wait for their zombies.
REAPER = """import os, time
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.2)
"""


class Root:
    """The root, in mount and PID namespaces of its own that a holder
    process (PID 1, chrooted) keeps; every command enters them,
    so that what the packages start stays until the holder is killed, and
    killing it stops all of it.  /sys/module holds an 'openvswitch' entry:
    ovs-ctl refuses to start without the kernel module, which the userspace
    datapath does not use and this machine does not have."""

    def __init__(self, path):
        self.path = path
        setup = f"""set -e
mount --make-rprivate /
mount --rbind /dev {path}/dev
mount -t sysfs -o ro sysfs {path}/sys
mount -t tmpfs tmpfs {path}/sys/module
mkdir {path}/sys/module/openvswitch
mount -t tmpfs tmpfs {path}/run
exec chroot {path} python3 -c '{REAPER}'
"""
        self.unshare = subprocess.Popen(
            ["unshare", "--mount", "--pid", "--fork",
             f"--mount-proc={path}/proc", "sh", "-c", setup])
        self.pid = None
        deadline = time.monotonic() + WAIT
        while self.pid is None and time.monotonic() < deadline:
            for child in self._children(self.unshare.pid):
                if Path(f"/proc/{child}/root").resolve() == path:
                    self.pid = child
            time.sleep(0.1)
        assert self.pid, "the root's namespaces did not come up"

    @staticmethod
    def _children(pid):
        found = []
        for task in Path(f"/proc/{pid}/task").glob("*"):
            found += (task / "children").read_text().split()
        return [int(p) for p in found]

    def run(self, command, check=True, timeout=600):
        """Runs the shell command in the root; its CompletedProcess."""
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
               "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive"}
        proc = subprocess.run(
            ["nsenter", "-t", str(self.pid), "-m", "-p", "-r", "-w",
             "sh", "-c", command], env=env, capture_output=True, text=True,
            timeout=timeout)
        if check:
            assert proc.returncode == 0, \
                f"{command}: exit {proc.returncode}\n{proc.stdout}" \
                f"\n{proc.stderr}"
        return proc

    def out(self, command):
        return self.run(command).stdout

    def processes(self):
        """The names of the processes running in the root, but the
        holder."""
        names = []
        for entry in Path(f"/proc/{self.pid}/root/proc").glob("[0-9]*"):
            try:
                if entry.name != "1":
                    names.append((entry / "comm").read_text().strip())
            except OSError:
                pass                    # Gone meanwhile.
        return sorted(names)

    def stop(self):
        os.kill(self.pid, 9)            # PID 1 of the namespace: all go.
        self.unshare.wait(timeout=WAIT)


def wait_for(what, predicate, timeout=WAIT, diagnose=lambda: ""):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, \
            f"no {what} in {timeout} s\n{diagnose()}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def root():
    debs = sorted(DEBS.glob("*.deb"))
    assert any(d.name.startswith("openvswitch-switch-dpdk_") for d in debs) \
        and any(d.name.startswith("awafs-controller_") for d in debs), \
        "no packages in build/deb: make deb first"
    with one_switch_per_machine():
        ensure_hugepages()
        shutil.rmtree(ROOT, ignore_errors=True)
        subprocess.run(["mmdebstrap", "--variant=minbase", "--mode=root",
                        "--include=procps,python3,systemd", "bookworm", str(ROOT),
                        str(SOURCES)], check=True, capture_output=True)
        local = ROOT / REPO_IN_ROOT.lstrip("/")
        local.mkdir(parents=True)
        for deb in debs:
            shutil.copy(deb, local)
        packages = subprocess.run(["dpkg-scanpackages", "."], cwd=local,
                                  capture_output=True, check=True)
        (local / "Packages").write_bytes(packages.stdout)
        (ROOT / "root" / "rest.py").write_text(REST_CLIENT)
        r = Root(ROOT)
        try:
            yield r
        finally:
            r.stop()
            shutil.rmtree(ROOT, ignore_errors=True)


def installed(root, package):
    proc = root.run(f"dpkg-query -W -f='${{Version}}' {package}",
                    check=False)
    return proc.stdout if proc.returncode == 0 else None


def start_switch(root):
    root.run("/etc/init.d/openvswitch-switch start")
    wait_for("ovs-vswitchd", lambda: root.run(
        "ovs-appctl -t ovs-vswitchd version", check=False).returncode == 0)


@contextlib.contextmanager
def host_without_hugepages():
    """No hugepages on the machine (the root holds the machine's lock, so no
    other switch uses them meanwhile): OVS asks DPDK for in-memory
    hugepages, which need no hugetlbfs mount, only reserved pages."""
    nr = Path("/proc/sys/vm/nr_hugepages")
    before = nr.read_text()
    nr.write_text("0")
    try:
        yield
    finally:
        nr.write_text(before)


def dpdk_failure(root):
    """What the switch logs when DPDK cannot start for want of hugepages:
    its ERR and EMER lines, without their timestamps and sequence
    numbers."""
    log = "/var/log/openvswitch/ovs-vswitchd.log"
    start_switch(root)
    root.run("ovs-vsctl set Open_vSwitch . other_config:dpdk-init=true "
             "'other_config:dpdk-extra=--no-pci --iova-mode=va'")

    def failure():
        lines = [line.split("|")[2:] for line in
                 root.run(f"cat {log}", check=False).stdout.splitlines()]
        errors = ["|".join(f) for f in lines if len(f) > 2
                  and f[1] in ("ERR", "EMER")]
        return errors if any("EMER" in e for e in errors) else None
    with host_without_hugepages():
        root.run(f": > {log}; /etc/init.d/openvswitch-switch restart",
                 check=False)
        errors = wait_for("DPDK's failure in the log", failure)
        root.run("/etc/init.d/openvswitch-switch stop", check=False)
    return errors


def test_debian_switch_first(root):
    """The host as it is before: Debian's DPDK switch, which has no
    awafs type."""
    root.run("apt-get update -q && apt-get install -y -q "
             "--no-install-recommends openvswitch-switch-dpdk")
    assert installed(root, "openvswitch-switch-dpdk") == STOCK
    root.run("update-alternatives --set ovs-vswitchd "
             "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk")
    start_switch(root)
    assert "awafs" not in root.out("ovs-vswitchd --version")
    root.stock_failure = dpdk_failure(root)
    assert root.stock_failure, "Debian's switch logged no DPDK failure"


def test_apt_prefers_these_packages(root):
    root.run(f"echo 'deb [trusted=yes] file:{REPO_IN_ROOT} ./' > "
             "/etc/apt/sources.list.d/awafs.list; apt-get update -q")
    policy = root.out("apt-cache policy openvswitch-switch-dpdk")
    assert f"Candidate: {AWAFS}" in policy, policy
    root.run("apt-get install -y -q --no-install-recommends "
             "openvswitch-switch-dpdk " + " ".join(OURS))
    for package in SWITCH:
        assert installed(root, package) == AWAFS, package
    assert root.out("readlink -f /usr/sbin/ovs-vswitchd").strip() == \
        "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
    version = root.out("ovs-vswitchd --version")
    assert "3.1.0+awafs" in version and "DPDK 22.11" in version, version


def test_systemd_reads_the_units(root):
    """The packages' units as systemd reads them: every command there,
    no unknown setting (this root has systemd, not running)."""
    verify = root.run("systemd-analyze verify awafs-controller.service "
                      "awafs-host@system.slice.service", check=False)
    assert verify.returncode == 0 and not verify.stdout + verify.stderr, \
        verify.stdout + verify.stderr
    unit = root.out("cat /lib/systemd/system/awafs-controller.service")
    assert "RestartPreventExitStatus=78" in unit
    assert re.search(r"^ExecStart=/usr/bin/awafs-controller --config "
                     r"/etc/awafs-controller/awafs-controller.conf$", unit,
                     re.M)


def test_without_hugepages_the_message_is_debians(root):
    assert dpdk_failure(root) == root.stock_failure


def test_awafs_qos_on_a_dpdk_null_port(root):
    # What dpdk recommends that this port needs: the ring mempool handler,
    # and the null PMD, as a host installs its NIC's.
    root.run("apt-get install -y -q --no-install-recommends "
             "librte-mempool-ring23 librte-net-null23")
    start_switch(root)
    root.run("ovs-vsctl set Open_vSwitch . other_config:dpdk-init=true "
             "'other_config:dpdk-extra=--no-pci --iova-mode=va "
             "--file-prefix=awafs-deb' other_config:dpdk-socket-mem=256 "
             "other_config:dpdk-socket-limit=512")
    root.run("/etc/init.d/openvswitch-switch restart")
    start_switch(root)
    root.run("ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev "
             f"other-config:datapath-id={DPID} "
             "protocols=OpenFlow10,OpenFlow13 -- "
             "set-controller br0 tcp:127.0.0.1:6653 -- "
             "add-port br0 dpdk0 -- set Interface dpdk0 type=dpdk "
             "options:dpdk-devargs=net_null0,no-rx=1")
    root.run("ovs-vsctl set port dpdk0 qos=@q -- --id=@q create qos "
             "type=awafs other_config:queues=3 "
             "other_config:percentiles=10,50")
    def shown():
        out = root.run("ovs-appctl qos/show dpdk0", check=False).stdout
        return out if "QoS: dpdk0 awafs" in out else None

    def diagnose():
        proc = root.run("ovs-appctl qos/show dpdk0; ovs-vsctl show; tail -30 "
                        "/var/log/openvswitch/ovs-vswitchd.log", check=False)
        return proc.stdout + proc.stderr
    show = wait_for("the awafs QoS in qos/show", shown, diagnose=diagnose)
    assert re.search(r"^percentiles: 10,50$", show, re.M), show
    assert re.search(r"^queues: 3$", show, re.M), show
    dump = root.out("ovs-ofctl -O OpenFlow13 dump-awafs br0")
    ofport = root.out("ovs-vsctl get interface dpdk0 ofport").strip()
    assert re.search(rf"^ port {ofport}: queues=3 .*percentiles=10,50 ",
                     dump, re.M), dump


def test_controller_service_sees_the_switch(root):
    root.run("/etc/init.d/awafs-controller start")
    url = f"http://127.0.0.1:8080/switches/{DPID}/ports/dpdk0"
    get = f"python3 /root/rest.py GET {url}"

    def port():
        proc = root.run(get, check=False)
        if proc.returncode:
            return None
        body = json.loads(proc.stdout)
        return body if body["status"] and len(body["queues"]) == 3 else None

    def diagnose():
        proc = root.run(f"{get}; tail -30 /var/log/awafs-controller.log; "
                        "ovs-vsctl list controller", check=False)
        return proc.stdout + proc.stderr
    body = wait_for("the port in the controller's REST API", port,
                    diagnose=diagnose)
    assert body["connected"]
    assert body["config"] == {"queues": "3", "percentiles": "10,50"}
    assert body["status"]["percentiles"] == "10,50"

    # The controller configures the switch through OVSDB's socket.
    root.run(f"python3 /root/rest.py PATCH {url}/config "
             "'{\"percentiles\": [20, 60]}'")
    wait_for("the controller's change in qos/show", lambda: re.search(
        r"^percentiles: 20,60$", root.out("ovs-appctl qos/show dpdk0"),
        re.M))


def test_a_broken_controller_configuration_is_refused(root):
    conf = "/etc/awafs-controller/awafs-controller.conf"
    root.run("/etc/init.d/awafs-controller stop")
    root.run(f"cp {conf} /root/good.conf; "
             f"sed -i 's/^rest = .*/rest = localhost/' {conf}")
    started = root.run("/etc/init.d/awafs-controller start", check=False)
    assert started.returncode != 0
    line = next(n for n, text in enumerate(
        root.out(f"cat {conf}").splitlines(), 1) if text.startswith("rest"))
    assert f"{conf}:{line}: localhost: not HOST:PORT" in \
        started.stdout + started.stderr
    assert "python3" not in root.processes()
    root.run(f"cp /root/good.conf {conf}")


def test_awafs_host_unit_attaches_a_cgroup(root):
    """The commands of awafs-host@.service, as systemd would run them for
    awafs-host@awafs-check.service: its Environment= and
    /etc/default/awafs-host (options commented out) expanded."""
    unit = root.out("cat /lib/systemd/system/awafs-host@.service")
    cgroups = re.search(r"^Environment=AWAFS_CGROUP_ROOT=(\S+)$", unit,
                        re.M).group(1)

    def command(key):
        line = re.search(rf"^{key}=(.*)$", unit, re.M).group(1)
        return (line.replace("${AWAFS_CGROUP_ROOT}", cgroups)
                .replace("%I", "awafs-check")
                .replace("$AWAFS_HOST_OPTIONS", "").strip())
    root.run(f"mount -t cgroup2 none {cgroups}; "
             f"mkdir {cgroups}/awafs-check")
    attached = root.out(command("ExecStart"))
    assert f"attached to {cgroups}/awafs-check" in attached, attached
    status = root.out(f"awafs-host status --cgroup {cgroups}/awafs-check")
    assert status.startswith("cgroup ") and "connections=0" in status
    assert "detached" in root.out(command("ExecStop"))
    root.run(f"rmdir {cgroups}/awafs-check")


def test_back_to_debian(root):
    root.run("/etc/init.d/openvswitch-switch stop")
    root.run("rm /etc/apt/sources.list.d/awafs.list; apt-get update -q")
    pinned = " ".join(f"{p}={STOCK}" for p in SWITCH)
    root.run(f"apt-get install -y -q --allow-downgrades {pinned}")
    for package in SWITCH:
        assert installed(root, package) == STOCK, package
    start_switch(root)
    assert "awafs" not in root.out("ovs-vswitchd --version")
    # The awafs QoS stays in OVSDB; Debian's switch refuses its type and
    # forwards on.
    assert root.out("ovs-vsctl get port dpdk0 qos").strip()


def test_purge_leaves_nothing(root):
    root.run("/etc/init.d/openvswitch-switch stop")
    root.run("apt-get purge -y -q " + " ".join(SWITCH + OURS))
    for package in SWITCH + OURS:
        assert installed(root, package) in (None, ""), package
    # Debian's purge keeps /var/log/openvswitch; these packages' own files
    # go.
    for path in ("/etc/openvswitch", "/etc/awafs-controller",
                 "/etc/default/awafs-host", "/var/log/awafs-controller.log",
                 "/usr/sbin/ovs-vswitchd"):
        assert root.run(f"test -e {path}", check=False).returncode, path
    assert root.processes() == [], root.processes()

"""A sandboxed, patched Open vSwitch with DPDK for tests and the demo.

Starts ovsdb-server and ovs-vswitchd from build/bin in a private run
directory (OVS_RUNDIR etc.), initialises DPDK in-process with no PCI
devices, capped memory and a private --file-prefix, and stops exactly the
processes it started.  Hugepages are reserved and mounted if needed.
"""

import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = REPO / "build" / "bin"
SCHEMA = REPO / "build" / "ovs" / "vswitchd" / "vswitch.ovsschema"
HUGEPAGES = 512


def ensure_hugepages(n=HUGEPAGES):
    """Reserves 'n' 2 MB hugepages and mounts hugetlbfs (root only)."""
    nr = Path("/proc/sys/vm/nr_hugepages")
    if int(nr.read_text()) < n:
        nr.write_text(str(n))
    if int(nr.read_text()) < n:
        raise RuntimeError(f"could not reserve {n} hugepages")
    mounts = Path("/proc/mounts").read_text()
    if not any(line.split()[2] == "hugetlbfs" for line in mounts.splitlines()):
        Path("/dev/hugepages").mkdir(exist_ok=True)
        subprocess.run(["mount", "-t", "hugetlbfs", "nodev", "/dev/hugepages"],
                       check=True)


@contextlib.contextmanager
def one_switch_per_machine():
    """Holds the machine-wide lock of sandboxed switches while in the block:
    veth names and the userspace datapath's 'ovs-netdev' tap device are
    machine-wide, so a second test run, soak or tool waits for the first.
    A process whose parent holds the lock (AWAFS_TEST_LOCK_HELD set) goes
    on."""
    if os.environ.get("AWAFS_TEST_LOCK_HELD"):
        yield
        return
    with open("/tmp/awafs-tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _links():
    return set(os.listdir("/sys/class/net"))


class OvsError(RuntimeError):
    pass


class SandboxProblem(AssertionError):
    """ovs-vswitchd exited badly or logged an error nobody expected."""


# Log lines a healthy switch never writes: OVS's own tests stop every daemon
# with OVS_VSWITCHD_STOP, which fails on such lines unless the test lists
# them as expected.
BAD_LOG = re.compile(r"\|(EMER|ERR)\|")
# What netdev-dpdk logs for a QoS configuration it rejects.
REJECTED_QOS = r"Failed to set QoS type \S+ on port"
# Stock OVS (ofproto-dpif-rid.c) logs this at exit now and then when a
# recirculation ID is still referenced as the bridge goes away: its own
# exit bookkeeping, seen once in test_faults, not a fault under test.
EXIT_NOISE = [r"ofproto_dpif_rid\|ERR\|recirc_id \d+ left allocated when "
              r"ofproto \(\S+\) is destructed"]


class OvsSandbox:
    """One ovsdb-server + ovs-vswitchd pair in a temporary directory.
    Without 'dpdk', a switch of system ports only (the remote hypervisor
    of testbed/tunnel.py); 'netns', the command line prefix that runs
    ovs-vswitchd in a network namespace (a Mininet host's argv());
    'wrapper', one that runs it under a tool (bench/instructions.py's
    valgrind), which cannot map DPDK's hugepage areas: with it DPDK takes
    ordinary memory (--no-huge)."""

    def __init__(self, pmd_cpu_mask="0x2", extra_config=None, vswitchd=None,
                 dpdk=True, netns=(), wrapper=()):
        self.dpdk = dpdk
        self.netns = list(netns)
        self.wrapper = list(wrapper)
        # Under a tool the switch runs tens of times slower, and slower
        # still when the machine is in its slow state: its commands wait
        # longer.
        self.patience = 6 if wrapper else 1
        if dpdk and not wrapper:
            ensure_hugepages()
        self.dir = Path(tempfile.mkdtemp(prefix="awafs-ovs-"))
        self.env = dict(os.environ,
                        OVS_RUNDIR=str(self.dir), OVS_LOGDIR=str(self.dir),
                        OVS_DBDIR=str(self.dir), OVS_SYSCONFDIR=str(self.dir),
                        PATH=f"{BIN}:{os.environ['PATH']}")
        self.db = self.dir / "conf.db"
        self.db_sock = f"unix:{self.dir / 'db.sock'}"
        self.ovsdb = None
        self.vswitchd = None
        self.pmd_cpu_mask = pmd_cpu_mask
        # Another ovs-vswitchd binary, e.g. Debian's stock one for reference.
        self.vswitchd_bin = str(vswitchd or BIN / "ovs-vswitchd")
        self.extra_config = extra_config or {}
        self.prefix = f"awafs{os.getpid()}x{id(self) & 0xffff:x}"
        self.bridges = set()
        self.links_before = set()
        self.af_packet_ports = 0
        # Patterns of ERR lines expected: the exit's, and those tests add.
        self.log_allowed = [re.compile(p) for p in EXIT_NOISE]
        self.log_checked = 0        # How far unexpected_log() has read.
        self.exits = []             # Bad exits of ovs-vswitchd, described.

    # --- lifecycle -----------------------------------------------------

    def start(self):
        self.links_before = _links()
        subprocess.run([str(BIN / "ovsdb-tool"), "create", str(self.db),
                        str(SCHEMA)], check=True, env=self.env)
        self.ovsdb = subprocess.Popen(
            [str(BIN / "ovsdb-server"), str(self.db),
             f"--remote=p{self.db_sock}",
             f"--unixctl={self.dir / 'ovsdb-server.ctl'}",
             f"--log-file={self.dir / 'ovsdb-server.log'}", "-vconsole:off"],
            env=self.env, stdin=subprocess.DEVNULL,
            stderr=open(self.dir / "ovsdb-server.stderr", "w"))
        self._wait_for(lambda: (self.dir / "db.sock").exists(), 10,
                       "ovsdb-server socket")
        self.vsctl("--no-wait", "init")
        config = {} if not self.dpdk else {
            "dpdk-init": "true",
            "dpdk-extra": f"--no-pci --iova-mode=va --file-prefix={self.prefix}"
                          " --log-level=pmd.*:error",
            "dpdk-socket-limit": "512",
            "dpdk-socket-mem": "256",
            "pmd-cpu-mask": self.pmd_cpu_mask,
        }
        if self.dpdk and self.wrapper:
            # --no-huge needs --legacy-mem, which keeps OVS from adding
            # --in-memory, and -m instead of the per-socket options.
            del config["dpdk-socket-limit"], config["dpdk-socket-mem"]
            config["dpdk-extra"] += " --no-huge --legacy-mem"
            config["dpdk-alloc-mem"] = "2048"
        config.update(self.extra_config)
        if config:
            self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                       *[f'other_config:{k}="{v}"'
                         for k, v in config.items()])
        self.start_vswitchd()
        return self

    def start_vswitchd(self):
        self.vswitchd = subprocess.Popen(
            [*self.netns, *self.wrapper, self.vswitchd_bin, self.db_sock,
             f"--unixctl={self.dir / 'ovs-vswitchd.ctl'}",
             f"--log-file={self.dir / 'ovs-vswitchd.log'}", "-vconsole:off",
             "-vnetdev_dpdk:dbg"],
            env=self.env, stdin=subprocess.DEVNULL,
            stderr=open(self.dir / "ovs-vswitchd.stderr", "a"))
        if self.dpdk:
            self._wait_for(lambda: self.vsctl("get", "Open_vSwitch", ".",
                                              "dpdk_initialized").strip()
                           == "true", 60 * self.patience,
                           "DPDK initialisation")
        else:
            self._wait_for(lambda: self.appctl("version", check=False),
                           30 * self.patience, "ovs-vswitchd")

    def stop_vswitchd(self):
        """Asks ovs-vswitchd to exit; an exit other than 0 within 20 s (a
        crash, an abort, a hang) is recorded for stop() to report.  Under a
        tool it has 'patience' times longer: valgrind runs its threads one at
        a time and writes its results at the exit."""
        grace = 20 * self.patience
        if self.vswitchd and self.vswitchd.poll() is None:
            try:
                self.appctl("exit", timeout=20)
            except (OvsError, subprocess.TimeoutExpired):
                pass
            try:
                self.vswitchd.wait(grace)
            except subprocess.TimeoutExpired:
                self.exits.append(f"did not exit within {grace} s of 'exit'")
                self.vswitchd.kill()
                self.vswitchd.wait()
        if self.vswitchd and self.vswitchd.returncode:
            self.exits.append(f"exited with {self.vswitchd.returncode}")
        self.vswitchd = None

    def allow_log(self, pattern):
        """An ERR line matching 'pattern' is expected from now on."""
        self.log_allowed.append(re.compile(pattern))

    def unexpected_log(self):
        """The ERR and EMER lines of ovs-vswitchd's log since the last call
        that no allow_log() pattern matches."""
        text = self.log()
        new, self.log_checked = text[self.log_checked:], len(text)
        return [line for line in new.splitlines() if BAD_LOG.search(line)
                and not any(p.search(line) for p in self.log_allowed)]

    def problems(self):
        """What went wrong with ovs-vswitchd since the last call, as lines
        (none: it exited cleanly and logged no unexpected error)."""
        exits, self.exits = self.exits, []
        return [f"ovs-vswitchd {e}" for e in exits] + self.unexpected_log()

    def stop(self, check=True):
        """Stops both daemons and removes the sandbox; then, with 'check',
        raises SandboxProblem if ovs-vswitchd exited badly or logged an
        unexpected error (the sandbox is kept for a look)."""
        self.stop_vswitchd()
        if self.ovsdb and self.ovsdb.poll() is None:
            self.ovsdb.send_signal(signal.SIGTERM)
            try:
                self.ovsdb.wait(10)
            except subprocess.TimeoutExpired:
                self.ovsdb.kill()
                self.ovsdb.wait()
        # The userspace datapath's tap devices ('ovs-netdev', bridges)
        # persist after ovs-vswitchd exits: remove the ones it made.
        for link in _links() - self.links_before:
            if link == "ovs-netdev" or link in self.bridges:
                subprocess.run(["ip", "link", "del", link],
                               capture_output=True)
        problems = self.problems() if check else []
        if not problems and not os.environ.get("AWAFS_KEEP_SANDBOX"):
            shutil.rmtree(self.dir, ignore_errors=True)
        if problems:
            raise SandboxProblem(f"sandbox {self.dir}:\n"
                                 + "\n".join(problems))

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        # Problems are reported only if nothing else went wrong first.
        self.stop(check=exc[0] is None)

    # --- commands ------------------------------------------------------

    def _run(self, argv, timeout=30, check=True):
        proc = subprocess.run(argv, capture_output=True, text=True,
                              env=self.env, timeout=timeout)
        if check and proc.returncode:
            raise OvsError(f"{' '.join(map(str, argv))}: "
                           f"{proc.stderr.strip() or proc.stdout.strip()}")
        return proc.stdout

    def vsctl(self, *args, timeout=60, check=True):
        return self._run([str(BIN / "ovs-vsctl"), f"--db={self.db_sock}",
                          f"--timeout={50 * self.patience}", *args],
                         timeout * self.patience, check)

    def appctl(self, *args, timeout=30, check=True):
        return self._run([str(BIN / "ovs-appctl"), "-t",
                          str(self.dir / "ovs-vswitchd.ctl"), *args],
                         timeout * self.patience, check)

    def appctl_ovsdb(self, *args, timeout=30):
        """ovs-appctl to the sandbox's ovsdb-server."""
        return self._run([str(BIN / "ovs-appctl"), "-t",
                          str(self.dir / "ovsdb-server.ctl"), *args], timeout)

    def ofctl(self, *args, timeout=30):
        return self._run([str(BIN / "ovs-ofctl"), *args], timeout)

    def log(self):
        path = self.dir / "ovs-vswitchd.log"
        return path.read_text() if path.exists() else ""

    # --- topology helpers ----------------------------------------------

    def add_bridge(self, name="br0"):
        self.bridges.add(name)
        self.vsctl("add-br", name, "--", "set", "bridge", name,
                   "datapath_type=netdev")
        self._wait_for(lambda: (self.dir / f"{name}.mgmt").exists(), 10,
                       f"{name} OpenFlow socket")

    def add_dpdk_port(self, bridge, name, devargs, ofport, **options):
        opts = [f"options:dpdk-devargs={devargs}"]
        opts += [f"options:{k}={v}" for k, v in options.items()]
        self.vsctl("add-port", bridge, name, "--", "set", "Interface", name,
                   "type=dpdk", f"ofport_request={ofport}", *opts)

    def add_af_packet_port(self, bridge, name, iface, ofport, **options):
        """A DPDK port on the net_af_packet PMD bound to kernel interface
        'iface' (each such port needs its own vdev name)."""
        self.af_packet_ports += 1
        self.add_dpdk_port(bridge, name, f"net_af_packet{self.af_packet_ports}"
                           f",iface={iface}", ofport, **options)

    def running(self):
        return self.vswitchd is not None and self.vswitchd.poll() is None

    def set_awafs(self, port, **config):
        """Creates (or replaces) an awafs QoS on 'port'."""
        kv = [f'other_config:{k}="{v}"' for k, v in config.items()]
        self.vsctl("set", "port", port, "qos=@q", "--", "--id=@q", "create",
                   "qos", "type=awafs", *kv)

    def qos_uuid(self, port):
        return self.vsctl("get", "port", port, "qos").strip()

    def update_awafs(self, port, **config):
        """Changes keys of the QoS already on 'port', in place in OVSDB."""
        kv = [f'other_config:{k}="{v}"' for k, v in config.items()]
        self.vsctl("set", "qos", self.qos_uuid(port), *kv)

    def qos_show(self, port):
        """Parses 'ovs-appctl qos/show PORT' into (type, details, queues)."""
        out = self.appctl("qos/show", port)
        qtype, details, queues, cur = None, {}, {}, None
        for line in out.splitlines():
            m = re.match(r"QoS: (\S+) (\S*)", line)
            if m:
                qtype = m.group(2)
                continue
            m = re.match(r"\s*(?:Queue (\d+)|Default):", line)
            if m:
                cur = queues.setdefault(int(m.group(1) or 0), {})
                continue
            m = re.match(r"\s*([\w-]+): (.*)", line)
            if m:
                (cur if cur is not None else details)[m.group(1)] = \
                    m.group(2).strip()
        return qtype, details, queues

    def backlog(self, port):
        """Packets 'port''s queueing QoS holds (0 without one)."""
        return int(self.qos_show(port)[1].get("backlog-packets", 0))

    def dump_awafs(self, bridge, *port, version="OpenFlow13"):
        """Parses 'ovs-ofctl dump-awafs BRIDGE [PORT]' into {OpenFlow port:
        (details, {queue: details})}."""
        out = self.ofctl("-O", version, "dump-awafs", bridge, *port)
        ports, queues = {}, None
        for line in out.splitlines()[1:]:
            m = re.match(r" ( ?)(port|queue) (\S+):(.*)", line)
            if not m:
                raise OvsError(f"dump-awafs printed: {out}")
            kv = dict(pair.split("=", 1) for pair in m.group(4).split())
            if m.group(2) == "port":
                queues = {}
                ports[m.group(3)] = (kv, queues)
            else:
                queues[int(m.group(3))] = kv
        return ports

    def mempool_in_use(self, port):
        out = self.appctl("netdev-dpdk/get-mempool-info", port)
        m = re.search(r"in use \((\d+)\)", out)
        return int(m.group(1))

    def iface_stats(self, iface):
        out = self.vsctl("get", "interface", iface, "statistics")
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", out)}

    @staticmethod
    def _wait_for(cond, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if cond():
                    return
            except OvsError:
                pass
            time.sleep(0.1)
        raise OvsError(f"timed out waiting for {what}")

"""A virtual machine's port without a virtual machine: dpdk-testpmd with a
net_virtio_user port plays the guest on a dpdkvhostuserclient port of the
sandboxed switch (as OVS's own tests/system-dpdk.at does), and forwards
everything between that port and a kernel tap device (net_tap), where the
tests capture what the guest received and inject what it sends.

    awi0p -> p0 --(AWAFS toward the guest)--> vhu0 ~ testpmd ~ tap awg0
    awg0 -> testpmd ~ vhu0 -> p1 --(AWAFS)--> awo0p
"""

import os
import re
import signal
import subprocess
from pathlib import Path

from testbed.switch import Switch, wait_until
from testbed.traffic import Capture, ip, tcp_frame

TAP = "awg0"
PROBE_PORT = 9              # Source port of connect_guest()'s probe frames.


class Guest:
    """dpdk-testpmd with one virtio-user port per vhost socket in 'socks'
    (it is their server end), started and stopped by PID.  With 'tap' it
    forwards between its first port and that tap device; without, it sinks
    what it receives (the benchmark's guest).  'queues' queue pairs per
    port; with 'verbose' it logs every packet it receives with its queue
    and source MAC address (received_by_queue())."""

    def __init__(self, socks, log, tap=None, queues=1, verbose=False):
        self.socks, self.log, self.tap = socks, log, tap
        self.queues, self.verbose = queues, verbose
        self.proc = None

    def start(self):
        for sock in self.socks:
            # A guest that was killed leaves its socket, and a server does
            # not bind over one.
            Path(sock).unlink(missing_ok=True)
        vdevs = [f"--vdev=net_virtio_user{i},path={sock},server=1,"
                 f"queues={self.queues}"
                 for i, sock in enumerate(self.socks)]
        extra = [f"--rxq={self.queues}", f"--txq={self.queues}"]
        if self.verbose:
            commands = Path(self.log).with_suffix(".cmds")
            commands.write_text("set verbose 1\n")
            extra.append(f"--cmdline-file={commands}")
        if self.tap:
            vdevs.append(f"--vdev=net_tap0,iface={self.tap}")
        # Forwarding on core 0: the switch's PMD polls core 1.  Its own
        # hugepage files, and memory shared with vhost (single file).
        argv = ["dpdk-testpmd", "-l", "0,1", "--main-lcore", "1", "--no-pci",
                "--file-prefix", f"awafsguest{os.getpid()}",
                "--single-file-segments", "-m", "256", *vdevs,
                "--", "--forward-mode=" + ("io" if self.tap else "rxonly"),
                "--auto-start", "--nb-cores=1", "--total-num-mbufs=4096",
                *extra]
        if self.verbose:
            # Its log is read while it runs: line-buffered.
            argv = ["stdbuf", "-oL", *argv]
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=open(self.log, "a"),
            stderr=subprocess.STDOUT)
        if self.tap:
            if not wait_until(self._tap_up, 20):
                self.stop()
                raise RuntimeError(f"testpmd did not start: see {self.log}")
            ip("link", "set", self.tap, "up")
            with open(f"/proc/sys/net/ipv6/conf/{self.tap}/disable_ipv6",
                      "w") as f:
                f.write("1")

    def _tap_up(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"testpmd exited: see {self.log}")
        return Path(f"/sys/class/net/{self.tap}").exists()

    def received_by_queue(self):
        """{queue: [source MAC of each packet]} of what the guest received,
        from its verbose log."""
        got, queue = {}, None
        for line in Path(self.log).read_text().splitlines():
            m = re.match(r"port \d+/queue (\d+): received", line)
            if m:
                queue = int(m.group(1))
            elif line.startswith("  src=") and queue is not None:
                got.setdefault(queue, []).append(line.split()[0][4:].lower())
        return got

    def received_by_stream(self):
        """{(port, rx queue): packets received} from the statistics testpmd
        logs when it stops with more than one queue (after stop())."""
        return {(int(port), int(queue)): int(rx) for port, queue, rx in
                re.findall(r"Forward Stats for RX Port= *(\d+)/Queue= *(\d+)"
                           r".*\n *RX-packets: (\d+)",
                           Path(self.log).read_text())}

    def stop(self, sig=signal.SIGTERM):
        """Stops testpmd with 'sig' (SIGKILL: a guest that vanishes)."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def add_vhost_port(sb, name, sock, ofport):
    """A dpdkvhostuserclient port whose guest serves socket 'sock'."""
    sb.vsctl("add-port", "br0", name, "--", "set", "Interface", name,
             "type=dpdkvhostuserclient", f"options:vhost-server-path={sock}",
             f"ofport_request={ofport}")


class VhostSwitch(Switch):
    """The two-port test switch (testbed/switch.py) plus vhu0, a
    dpdkvhostuserclient port (OpenFlow port 3) with a guest: TCP from p0
    goes to the guest, everything from the guest goes to p1."""

    def __init__(self):
        super().__init__()
        self.sock = self.sb.dir / "vhu0.sock"
        try:
            add_vhost_port(self.sb, "vhu0", self.sock, 3)
            self.sb.ofctl("del-flows", "br0")
            self.sb.ofctl("add-flow", "br0", "in_port=1,tcp,actions=output:3")
            self.sb.ofctl("add-flow", "br0", "in_port=3,actions=output:2")
            self.guest = Guest([self.sock], self.sb.dir / "testpmd.log",
                               tap=TAP)
            self.connect_guest()
        except BaseException:
            self.close()
            raise

    def guest_ready(self):
        return "virtio is now ready for processing" in self.sb.log()[
            self._log_mark:]

    def connect_guest(self):
        """Starts the guest and waits until a frame from p0 reaches its tap
        (the vrings ready is not enough: testpmd forwards a moment
        later)."""
        self._log_mark = len(self.sb.log())
        self.guest.start()
        if not wait_until(self.guest_ready, 20, step=0.1):
            raise RuntimeError("vhu0: the guest did not connect")
        probe = tcp_frame(sport=PROBE_PORT, seq=0)
        for _ in range(100):
            cap = Capture(TAP, match=lambda f: f == probe)
            self.src.send([probe])
            arrived = cap.wait_for(1, 0.1)
            cap.stop()
            if arrived:
                return
        raise RuntimeError("vhu0: the guest does not forward")

    def guest_gone(self):
        return "has been removed" in self.sb.log()[self._log_mark:]

    def close(self):
        guest = getattr(self, "guest", None)
        if guest:
            # A guest stopped on purpose may reset its end of the socket,
            # which DPDK's vhost library logs as errors of that socket.
            self.sb.allow_log(
                rf"VHOST_CONFIG: \({re.escape(str(self.sock))}\) "
                r"(recvmsg failed .*Connection reset by peer"
                r"|vhost read message failed)")
            guest.stop()
        super().close()

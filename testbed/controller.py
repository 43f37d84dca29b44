"""The controller app (ryu-app/, build/bin/awafs-controller) as a process
for tests and the soak: started and stopped by its PID, its REST API called
over loopback."""

import json
import os
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from testbed.switch import wait_until

BIN = Path(__file__).resolve().parent.parent / "build" / "bin"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Controller:
    """awafs-controller listening for switches on 'ofp_port', configuring
    them through 'ovsdb' ({dpid: OVSDB remote}); its output goes to 'log'.
    'hub' is os-ken's (OSKEN_HUB_TYPE): "native" threads, or "eventlet",
    the only one of the os-ken Debian 12 packages."""

    def __init__(self, ofp_port, ovsdb, log, hub="native"):
        self.ofp_port, self.ovsdb, self.log = ofp_port, ovsdb, Path(log)
        self.rest = f"127.0.0.1:{free_port()}"
        self.hub = hub
        self.proc = None

    def start(self, timeout=20):
        """Starts it and waits until every switch of 'ovsdb' is connected."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        argv = [str(BIN / "awafs-controller"), "--ofp-host", "127.0.0.1",
                "--ofp-port", str(self.ofp_port), "--rest", self.rest]
        for dpid, remote in self.ovsdb.items():
            argv += ["--ovsdb", f"{dpid}={remote}"]
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, OSKEN_HUB_TYPE=self.hub))
        if not wait_until(self.answers, timeout):
            raise RuntimeError(f"the controller's REST API: see {self.log}")
        if not wait_until(lambda: self.connected() == set(self.ovsdb),
                          timeout):
            raise RuntimeError(f"switches not connected: see {self.log}")

    def stop(self, sig=signal.SIGTERM):
        os.kill(self.proc.pid, sig)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def answers(self):
        try:
            self.request("GET", "/switches")
            return True
        except OSError:
            return False

    def connected(self):
        return {s["dpid"] for s in self.request("GET", "/switches")[1]
                ["switches"] if s["connected"]}

    def call(self, method, path, body=None, raw=None):
        """(status, content type, decoded body) of a REST call."""
        data = raw if raw is not None else (
            json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(f"http://{self.rest}{path}", data=data,
                                     method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                status, ctype, text = (resp.status, resp.headers
                                       .get_content_type(), resp.read())
        except urllib.error.HTTPError as e:
            status, ctype, text = e.code, e.headers.get_content_type(), \
                e.read()
        decoded = json.loads(text) if ctype == "application/json" \
            else text.decode()
        return status, ctype, decoded

    def request(self, method, path, body=None, raw=None):
        """(status, decoded body)."""
        status, _, decoded = self.call(method, path, body, raw)
        return status, decoded

    def port(self, dpid, port):
        status, body = self.request("GET", f"/switches/{dpid}/ports/{port}")
        if status != 200:
            raise RuntimeError(f"GET {dpid} {port}: {status} {body}")
        return body

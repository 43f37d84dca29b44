"""Real servers from Debian, run in a test host's network namespace and,
for the host agent, in a cgroup: nginx, redis-server and memcached.  Each is
started in the foreground with a configuration in a temporary directory and
stopped by its PID (never by name)."""

import shutil
import subprocess
import tempfile
import time
from pathlib import Path


class Server:
    def __init__(self, host, argv, port, cgroup=None, workdir=None):
        self.host, self.port = host, port
        self.dir = workdir
        self.proc = host.popen(*argv, cgroup=cgroup,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while not self.listening():
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError(f"{argv[0]} did not start listening on "
                                   f"port {port}")
            time.sleep(0.05)

    def listening(self):
        out = self.host.run("ss", "-Hltn", f"sport = :{self.port}").stdout
        return bool(out.strip())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


NGINX_CONF = """\
daemon off;
master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;
    server {{ listen {addr}:{port}; root {root}; }}
}}
"""


class Nginx(Server):
    """nginx serving the files of 'root' over HTTP/1.1 with keep-alive.  It
    writes each response as a header (writev) and then the body
    (sendfile)."""

    def __init__(self, host, root, port=8080, cgroup=None):
        d = Path(tempfile.mkdtemp(prefix="awafs-nginx-"))
        (d / "nginx.conf").write_text(NGINX_CONF.format(
            dir=d, addr=host.addr, port=port, root=root))
        super().__init__(host, ["nginx", "-e", str(d / "error.log"), "-p",
                                str(d), "-c", str(d / "nginx.conf")],
                         port, cgroup, d)

    def url(self, name):
        return f"http://{self.host.addr}:{self.port}/{name}"


class Redis(Server):
    """redis-server without persistence.  It writes a large reply in
    pieces: as much as the socket buffer takes, the rest when it has
    room again."""

    def __init__(self, host, port=6379, cgroup=None):
        d = Path(tempfile.mkdtemp(prefix="awafs-redis-"))
        super().__init__(host, ["redis-server", "--bind", host.addr,
                                "--port", str(port), "--save", "",
                                "--appendonly", "no", "--dir", str(d),
                                "--protected-mode", "no"],
                         port, cgroup, d)


class Memcached(Server):
    """memcached, TCP only, items up to 4 MB.  It writes a reply with one
    sendmsg() of several pieces (header line, value, END)."""

    def __init__(self, host, port=11211, cgroup=None):
        super().__init__(host, ["memcached", "-u", "root", "-l", host.addr,
                                "-p", str(port), "-U", "0", "-m", "256",
                                "-I", "4m"], port, cgroup)


def resp_command(*args):
    """One command in the Redis protocol (for redis-cli --pipe)."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def resp_bulk_reply_size(value_len):
    """Bytes of Redis's reply to GET of a 'value_len'-byte value."""
    return len(b"$%d\r\n" % value_len) + value_len + 2

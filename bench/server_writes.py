"""How real servers write a response: system calls per response, by strace.

    python3 bench/server_writes.py

nginx (a 10 kB and a 1 MB file over one keep-alive connection), redis-server
(GET of a 10 kB and a 1 MB value) and memcached (get of a 10 kB and a
1000 kB value), each in a network namespace of its own on loopback, traced
with strace while a client fetches each response once.  Prints, per server
and response size, the write-type system calls the server made for it
(writev, sendfile, write, sendmsg) -- why the host agent cannot end a
message at the first drained write (host-agent/README.md)."""

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from testbed.hosts import Host  # noqa: E402
from testbed.servers import Memcached, Nginx, Redis, resp_command  # noqa

SIZES = [10000, 1000000]
SYSCALLS = "write,writev,sendfile,sendmsg,sendto"


def traced(server, fetch):
    """Runs fetch() while strace follows 'server'; returns the write-type
    system calls on sockets, as (name, bytes)."""
    with tempfile.NamedTemporaryFile(suffix=".strace") as out:
        st = subprocess.Popen(["strace", "-f", "-qq", "-e",
                               f"trace={SYSCALLS}", "-o", out.name, "-p",
                               str(server.proc.pid)],
                              stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        fetch()
        time.sleep(0.3)
        st.terminate()
        st.wait()
        calls = []
        for line in Path(out.name).read_text().splitlines():
            m = re.search(r"(\w+)\((\d+),.*= (\d+)$", line)
            if m and int(m.group(3)) > 8:     # Not eventfd pokes.
                calls.append((m.group(1), int(m.group(3))))
        return calls


def summary(calls):
    names = {}
    for name, _ in calls:
        names[name] = names.get(name, 0) + 1
    return ", ".join(f"{n} {name}" for name, n in sorted(names.items()))


def main():
    host = Host(9)
    rows = []
    try:
        www = Path(tempfile.mkdtemp(prefix="awafs-www-"))
        www.chmod(0o755)
        for size in SIZES:
            (www / str(size)).write_bytes(b"n" * size)
        nginx = Nginx(host, www)
        try:
            for size in SIZES:
                calls = traced(nginx, lambda: host.run(
                    "curl", "-s", "-o", "/dev/null", nginx.url(size)))
                rows.append(("nginx", size, calls))
        finally:
            nginx.stop()

        redis = Redis(host)
        try:
            load = b"".join(resp_command("SET", f"k{s}", b"r" * s)
                            for s in SIZES)
            subprocess.run(["ip", "netns", "exec", host.ns, "redis-cli", "-h",
                            host.addr, "--pipe"], input=load, check=True,
                           capture_output=True)
            for size in SIZES:
                cmd = resp_command("GET", f"k{size}").decode()
                calls = traced(redis, lambda: host.run(
                    sys.executable, "-c", CLIENT, host.addr,
                    str(redis.port), cmd, str(size)))
                rows.append(("redis-server", size, calls))
        finally:
            redis.stop()

        mc = Memcached(host)
        try:
            for size in SIZES:
                host.run(sys.executable, "-c", CLIENT, host.addr,
                         str(mc.port), f"set k{size} 0 0 {size}\r\n"
                         + "m" * size + "\r\n", "8")
                calls = traced(mc, lambda: host.run(
                    sys.executable, "-c", CLIENT, host.addr, str(mc.port),
                    f"get k{size}\r\n", str(size)))
                rows.append(("memcached", size, calls))
        finally:
            mc.stop()
    finally:
        host.delete()

    print("| server | response body | write calls | bytes each |")
    print("|---|---|---|---|")
    for name, size, calls in rows:
        each = [b for _, b in calls]
        shown = ", ".join(map(str, each[:6])) + (", ..." if len(each) > 6
                                                 else "")
        print(f"| {name} | {size} | {summary(calls)} | {shown} |")


# Sends argv[3] to argv[1]:argv[2] and reads until argv[4] bytes came.
CLIENT = """
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
s.sendall(sys.argv[3].encode())
got = 0
while got < int(sys.argv[4]):
    got += len(s.recv(1 << 20))
"""

if __name__ == "__main__":
    main()

"""How real servers write a response: system calls per response, by strace.

    python3 -m bench.server_writes

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

from testbed.net import EndHost
from testbed.servers import Memcached, Nginx, Redis

REPO = Path(__file__).resolve().parent.parent

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


def kv(host, kind, server, mode, size):
    """testbed/kv_client.py: one value of 'size' bytes, stored or read."""
    host.run(sys.executable, str(REPO / "testbed" / "kv_client.py"), kind,
             host.addr, str(server.port), mode, f"s{size}-", str(size))


def summary(calls):
    names = {}
    for name, _ in calls:
        names[name] = names.get(name, 0) + 1
    return ", ".join(f"{n} {name}" for name, n in sorted(names.items()))


def main():
    host = EndHost("h9")          # A namespace of its own, loopback only.
    host.configDefault(ip=None, mac=None)
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

        for kind, cls in (("redis", Redis), ("memcached", Memcached)):
            server = cls(host)
            try:
                for size in SIZES:
                    kv(host, kind, server, "load", size)
                    calls = traced(server, lambda: kv(host, kind, server,
                                                      "get", size))
                    rows.append((kind, size, calls))
            finally:
                server.stop()
    finally:
        host.terminate()

    print("| server | response body | write calls | bytes each |")
    print("|---|---|---|---|")
    for name, size, calls in rows:
        each = [b for _, b in calls]
        shown = ", ".join(map(str, each[:6])) + (", ..." if len(each) > 6
                                                 else "")
        print(f"| {name} | {size} | {summary(calls)} | {shown} |")


if __name__ == "__main__":
    main()

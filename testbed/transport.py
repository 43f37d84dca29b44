"""The transport of a testbed run: the TCP congestion control of every host
the bed starts, set when the bed starts and proved from the live sockets
while the run goes.

A network namespace inherits the initial namespace's default congestion
control (bbr on this project's machines), and may make another one its
default (net.ipv4.tcp_congestion_control) only if it is in the allowed list
(net.ipv4.tcp_allowed_congestion_control), which only the initial namespace
may change.  So a bed adds its congestion control to the allowed list
(Allowed, restored when the bed closes), makes it the default of each
host's namespace, and has the host agent select it for the servers'
cgroup too (attach --cc).  Then, while the clients run, prove() reads
every established connection's congestion control back (ss -ti: the
kernel's own name of the socket's algorithm) and fails the run on one that
differs.

Transports (TRANSPORTS): "cubic" and "bbr" are the kernel's, without ECN;
"dctcp" is the host agent's awafs_dctcp (BPF struct_ops; this kernel has no
tcp_dctcp) on every host, with ECN marking at the awafs port; "mcp" is
awafs_mcp (Karuna's MCP) for the servers' responses and awafs_dctcp for
everything else.  Any other congestion control the kernel has (e.g. "reno")
is a transport of its own name, without ECN."""

from pathlib import Path

PROC = Path("/proc/sys/net/ipv4")
AVAILABLE = PROC / "tcp_available_congestion_control"
ALLOWED = PROC / "tcp_allowed_congestion_control"

# transport: (servers' congestion control, every other socket's, ECN)
TRANSPORTS = {
    "cubic": ("cubic", "cubic", False),
    "bbr": ("bbr", "bbr", False),
    "dctcp": ("awafs_dctcp", "awafs_dctcp", True),
    "mcp": ("awafs_mcp", "awafs_dctcp", True),
}
AGENT_CCS = ("awafs_dctcp", "awafs_mcp")    # Registered by the host agent.


class TransportError(RuntimeError):
    pass


def available():
    return AVAILABLE.read_text().split()


def spec(transport):
    """(servers' congestion control, others', ECN) of 'transport'."""
    if transport in TRANSPORTS:
        return TRANSPORTS[transport]
    if transport in available():
        return transport, transport, False
    raise TransportError(
        f"transport {transport!r}: not one of {', '.join(TRANSPORTS)} and "
        f"not a congestion control this kernel has (available: "
        f"{AVAILABLE.read_text().strip()}; a module would need "
        f"'modprobe tcp_{transport}')")


def uses_agent_cc(transport):
    return spec(transport)[0] in AGENT_CCS


def ecn(transport):
    return spec(transport)[2]


class Allowed:
    """Adds congestion controls to the initial namespace's allowed list
    (only those missing) and restore() puts the list back as it was."""

    def __init__(self):
        self.before = None

    def add(self, *ccs):
        have = available()
        for cc in ccs:
            if cc not in have:
                raise TransportError(
                    f"congestion control {cc!r} is not available in this "
                    f"kernel (available: {' '.join(have)}; a kernel that "
                    f"builds it as a module needs 'modprobe tcp_{cc}', the "
                    f"host agent's need 'awafs-host dctcp register')")
        allowed = ALLOWED.read_text().split()
        missing = [cc for cc in ccs if cc not in allowed]
        if missing:
            if self.before is None:
                self.before = allowed
            ALLOWED.write_text(" ".join(allowed + missing))

    def restore(self):
        if self.before is not None:
            ALLOWED.write_text(" ".join(self.before))
            self.before = None


def set_default(host, cc):
    """Makes 'cc' the default congestion control of 'host''s namespace and
    checks that it is."""
    host.run("sysctl", "-qw", f"net.ipv4.tcp_congestion_control={cc}")
    got = host.run("sysctl", "-n", "net.ipv4.tcp_congestion_control")
    if got.stdout.strip() != cc:
        raise TransportError(f"{host.name}: default congestion control is "
                             f"{got.stdout.strip()}, not {cc}")


def connections(host):
    """The established TCP connections of 'host''s namespace, as
    (local address:port, peer address:port, congestion control) from
    ss -ti (None where it shows none)."""
    names = set(available())
    out = host.run("ss", "-tinH", "state", "established").stdout
    conns = []
    for line in out.splitlines():
        if not line.strip():
            continue
        if line[0] in " \t":
            if conns and conns[-1][2] is None:
                cc = next((t for t in line.split() if t in names), None)
                conns[-1] = (*conns[-1][:2], cc)
            continue
        fields = line.split()
        conns.append((fields[2], fields[3], None))
    return conns


class Proof:
    """What a run's sockets ran, per host: {host: {cc: connections}}, and
    the check that each ran what its transport says.  'server_ports':
    {host: ports its servers listen on}: a connection on one of them is a
    server's (the responses' sender), any other a client's."""

    def __init__(self, transport, hosts, server_ports):
        self.transport = transport
        self.server_cc, self.other_cc, _ = spec(transport)
        self.hosts = hosts
        self.server_ports = server_ports
        self.seen = {}
        self.sides = set()

    def is_server(self, host, local):
        port = int(local.rsplit(":", 1)[1])
        return port in self.server_ports.get(host.name, ())

    def expected(self, host, local):
        return (self.server_cc if self.is_server(host, local)
                else self.other_cc)

    def both_sides_seen(self):
        """Whether a server's and a client's connection were both read:
        a short run may give one read only once this holds."""
        return self.sides == {"server", "client"}

    def check(self):
        """Reads every host's connections; raises TransportError on one
        whose congestion control is not the transport's.  Returns how
        many connections it read."""
        n = 0
        for host in self.hosts:
            for local, peer, cc in connections(host):
                want = self.expected(host, local)
                if cc != want:
                    raise TransportError(
                        f"transport {self.transport}: connection {local} -> "
                        f"{peer} on {host.name} runs {cc}, not {want}")
                counts = self.seen.setdefault(host.name, {})
                counts[cc] = counts.get(cc, 0) + 1
                self.sides.add("server" if self.is_server(host, local)
                               else "client")
                n += 1
        return n

    def record(self):
        """For a result file: the transport, what it asks for and what the
        sockets showed ({host: {cc: connection samples}})."""
        return {"transport": self.transport,
                "server_cc": self.server_cc, "other_cc": self.other_cc,
                "ecn": ecn(self.transport), "sockets_seen": self.seen}

    def require_seen(self):
        if not self.seen:
            raise TransportError(f"transport {self.transport} not proved: "
                                 "no TCP connection seen during the run")

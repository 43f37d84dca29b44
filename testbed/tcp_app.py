"""Unmodified TCP applications for the end-to-end tests.

    python3 tcp_app.py server PORT N_CONNECTIONS [--md5 PEER]
    python3 tcp_app.py client HOST PORT SIZES [--gap-ms G] [--per-message]
                              [--chunk BYTES [--chunk-gap-ms G]] [--eor]
                              [--md5] [--tcp-info FILE]

The server reads every connection to EOF and prints the bytes it received.
The client sends each message (sizes comma-separated) with one sendall(),
or in writes of --chunk bytes --chunk-gap-ms apart, waiting --gap-ms between
messages, over one connection or one per message.  --eor marks the end of
each message with MSG_EOR, the one change an application makes to give the
host agent exact message boundaries: send(data, socket.MSG_EOR) for the
message's last write.  Nothing else in it knows about AWAFS: the test puts
it in the agent's cgroup.
--md5 signs the connection with TCP-MD5 (RFC 2385), whose 18-byte option
leaves too little option space for AWAFS's beside timestamps.
--tcp-info writes the kernel's view of the (first) connection while it
sends: a "# congestion-control ecn=0|1" line, then samples of TCP_INFO
every millisecond, "seconds cwnd ssthresh" lines, in segments.
"""

import fcntl
import socket
import struct
import sys
import termios
import threading
import time

TCP_MD5SIG = 14
MD5_KEY = b"awafs-test-key"


def set_md5(sock, peer):
    """struct tcp_md5sig: sockaddr_storage, flags, prefixlen, keylen,
    ifindex, key[80]."""
    addr = struct.pack("=H", socket.AF_INET) + struct.pack("!H", 0) \
        + socket.inet_aton(peer)
    sig = addr.ljust(128, b"\0") + struct.pack("=BBHi", 0, 0, len(MD5_KEY),
                                               0) + MD5_KEY.ljust(80, b"\0")
    sock.setsockopt(socket.IPPROTO_TCP, TCP_MD5SIG, sig)


# struct tcp_info (linux/tcp.h): tcpi_snd_ssthresh and tcpi_snd_cwnd follow
# 8 bytes of u8 fields and 17 u32 ones.
TCP_INFO_SSTHRESH_CWND = struct.Struct("=8x68xII")
TCP_INFO_SAMPLE_S = 0.001
TCPI_OPT_ECN = 8                # tcpi_options: ECN was negotiated.


def sample_tcp_info(sock, path, done):
    """Writes 'sock''s cwnd and ssthresh to 'path' every millisecond until
    'done' is set."""
    t0 = time.monotonic()
    with open(path, "w") as out:
        cc = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                             16).rstrip(b"\0").decode()
        options = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[5]
        out.write(f"# {cc} ecn={int(bool(options & TCPI_OPT_ECN))}\n")
        while not done.is_set():
            info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO,
                                   TCP_INFO_SSTHRESH_CWND.size)
            ssthresh, cwnd = TCP_INFO_SSTHRESH_CWND.unpack(info)
            out.write(f"{time.monotonic() - t0:.6f} {cwnd} {ssthresh}\n")
            time.sleep(TCP_INFO_SAMPLE_S)


def outq(sock):
    """The bytes in 'sock''s send queue, not yet acknowledged."""
    return struct.unpack("i", fcntl.ioctl(sock, termios.TIOCOUTQ,
                                          b"\0" * 4))[0]


def server(port, n_conns, md5_peer=None):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if md5_peer:
        set_md5(srv, md5_peer)
    srv.bind(("0.0.0.0", port))
    srv.listen(64)
    srv.settimeout(60)
    total = [0]

    def drain(conn):
        with conn:
            while True:
                data = conn.recv(1 << 16)
                if not data:
                    return
                total[0] += len(data)

    threads = []
    for _ in range(n_conns):
        conn, _ = srv.accept()
        t = threading.Thread(target=drain, args=(conn,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    print(total[0], flush=True)


def send_message(sock, size, chunk, chunk_gap_s, eor):
    """Writes one message of 'size' bytes in writes of 'chunk' bytes (all at
    once if 0), the last one with MSG_EOR if 'eor'."""
    chunk = chunk or size
    for off in range(0, size, chunk):
        last = off + chunk >= size
        sock.sendall(b"m" * min(chunk, size - off),
                     socket.MSG_EOR if eor and last else 0)
        if not last:
            time.sleep(chunk_gap_s)


def client(host, port, sizes, gap_s, per_message, md5=False, chunk=0,
           chunk_gap_s=0, eor=False, tcp_info=None):
    sock = None
    sampler, done = None, threading.Event()
    for size in sizes:
        if sock is None:
            sock = socket.socket()
            if md5:
                set_md5(sock, host)
            sock.settimeout(30)
            sock.connect((host, port))
            if tcp_info and not sampler:
                sampler = threading.Thread(target=sample_tcp_info,
                                           args=(sock, tcp_info, done))
                sampler.start()
        send_message(sock, size, chunk, chunk_gap_s, eor)
        if per_message:
            done.set()
            sock.close()
            sock = None
        time.sleep(gap_s)
    if sampler and sock:
        # Until the peer has acknowledged everything: what the window did
        # while the last of the data was still in the send buffer.
        while outq(sock) and not done.is_set():
            time.sleep(TCP_INFO_SAMPLE_S)
    done.set()
    if sampler:
        sampler.join()
    if sock:
        sock.close()


def main(argv):
    if argv[1] == "server":
        md5 = argv[argv.index("--md5") + 1] if "--md5" in argv else None
        server(int(argv[2]), int(argv[3]), md5)
        return
    args = argv[2:]

    def value(flag, default):
        return float(args[args.index(flag) + 1]) if flag in args else default

    client(args[0], int(args[1]), [int(s) for s in args[2].split(",")],
           value("--gap-ms", 5) / 1000, "--per-message" in args,
           "--md5" in args, int(value("--chunk", 0)),
           value("--chunk-gap-ms", 0) / 1000, "--eor" in args,
           args[args.index("--tcp-info") + 1] if "--tcp-info" in args
           else None)


if __name__ == "__main__":
    main(sys.argv)

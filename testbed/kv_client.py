"""A client of the cache servers, with Debian's client libraries.

    python3 kv_client.py redis|memcached ADDR PORT load|get PREFIX SIZES

'load' stores values PREFIX0, PREFIX1, ... of the comma-separated SIZES
(bytes of 'v'); 'get' reads them back, one request at a time over one
connection (redis-py GET, pymemcache get), and prints the bytes read.  Run
by the venv's Python, which sees Debian's python3-redis and
python3-pymemcache."""

import sys


def main(kind, addr, port, mode, prefix, sizes):
    sizes = [int(n) for n in sizes.split(",")]
    if kind == "redis":
        import redis
        c = redis.Redis(host=addr, port=int(port))
        put, get = c.set, c.get
    else:
        from pymemcache.client.base import Client
        c = Client((addr, int(port)))

        def put(key, value):
            c.set(key, value, noreply=False)
        get = c.get
    if mode == "load":
        for i, n in enumerate(sizes):
            put(f"{prefix}{i}", b"v" * n)
    else:
        print(sum(len(get(f"{prefix}{i}")) for i in range(len(sizes))))


if __name__ == "__main__":
    main(*sys.argv[1:])

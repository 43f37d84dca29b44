"""A patched switch to try the controller with, in the foreground until
Ctrl-C or SIGTERM: the sandboxed ovsdb-server and ovs-vswitchd
(testbed/ovs_sandbox.py), bridge br0 with datapath ID 0000000000000001
and one DPDK port, dpdk0 (net_null: it drops what it is sent), whose
OpenFlow controller is CONTROLLER and whose OVSDB also listens on OVSDB.

usage: build/venv/bin/python -m testbed.switch_server
           [--controller tcp:127.0.0.1:6653] [--ovsdb ptcp:6640:127.0.0.1]
"""

import argparse
import signal

from testbed.ovs_sandbox import (OvsSandbox,
                                 one_switch_per_machine)

DPID = "0000000000000001"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--controller", default="tcp:127.0.0.1:6653")
    ap.add_argument("--ovsdb", default="ptcp:6640:127.0.0.1")
    args = ap.parse_args()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    with one_switch_per_machine(), OvsSandbox() as sb:
        sb.appctl_ovsdb("ovsdb-server/add-remote", args.ovsdb)
        sb.add_bridge()
        sb.add_dpdk_port("br0", "dpdk0", "net_null0,no-rx=1", 1)
        sb.vsctl("set", "bridge", "br0", f"other-config:datapath-id={DPID}",
                 "protocols=OpenFlow10,OpenFlow13", "--", "set-controller",
                 "br0", args.controller)
        print(f"switch {DPID}: bridge br0, port dpdk0; OpenFlow to "
              f"{args.controller}, OVSDB on {args.ovsdb} and "
              f"{sb.db_sock}; Ctrl-C stops it", flush=True)
        try:
            while not stop:
                signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

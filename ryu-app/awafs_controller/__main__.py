"""awafs-controller: the launcher (os-ken 4 has no osken-manager).

    awafs-controller [--config FILE] --ofp-port 6653 --rest 127.0.0.1:8080 \
        [--ovsdb DPID=REMOTE ...]
"""

import argparse
import logging
import sys
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from awafs_controller.compat import load
from awafs_controller.conffile import ConfError, to_argv
from awafs_controller.ovsdb import Ovsdb
from awafs_controller.rest import Api
from awafs_controller.state import parse_dpid

APP_MODULE = "awafs_controller.app"
# sysexits.h's EX_CONFIG: the unit does not restart on it
# (packages/debian/awafs-controller.service).
EX_CONFIG = 78


class RestServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass            # The dashboard polls every second.


def rest_server(ken, address, api):
    """The REST server for the framework's hub: a wsgiref server, one
    thread per request, beside os-ken's native hub (threads); the hub's
    own WSGI server under an eventlet hub (Ryu's, os-ken's before 3.0 as
    Debian 12 ships it), where wsgiref's blocking select would starve every
    green thread, the OpenFlow listener's first."""
    if hasattr(ken.hub, "WSGIServer"):
        # The hub logs each request at INFO; the dashboard polls every
        # second.
        logging.getLogger(f"{ken.name}.lib.hub").setLevel(logging.WARNING)
        return ken.hub.WSGIServer(address, api)
    server = RestServer(address, QuietHandler)
    server.set_app(api)
    return server


def port_number(text):
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"{text}: not a port (1-65535)")
    return int(text)


def host_port(text):
    host, sep, port = text.rpartition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text}: not HOST:PORT")
    return host or "0.0.0.0", port_number(port)


def ovsdb_remote(text):
    dpid, sep, remote = text.partition("=")
    if not sep or not remote:
        raise argparse.ArgumentTypeError(f"{text}: not DPID=REMOTE")
    try:
        return parse_dpid(dpid), remote
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def parse_args(argv=None):
    """The options, those of --config FILE first: the command line's
    override them (--ovsdb adds to the file's).  A broken file exits with
    EX_CONFIG and 'FILE:LINE: reason'."""
    argv = sys.argv[1:] if argv is None else list(argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    known, rest = pre.parse_known_args(argv)
    if known.config:
        options = {"ofp-port": port_number, "ofp-host": str,
                   "rest": host_port, "verbose": None}
        try:
            rest = to_argv(known.config, options, ovsdb_remote) + rest
        except ConfError as e:
            print(f"awafs-controller: {e}", file=sys.stderr)
            sys.exit(EX_CONFIG)
    p = argparse.ArgumentParser(
        prog="awafs-controller",
        description="AWAFS controller: OpenFlow 1.3 observation, OVSDB "
        "configuration, REST API, /metrics and a dashboard.")
    p.add_argument("--config", metavar="FILE",
                   help="options from FILE first (ryu-app/README.md)")
    p.add_argument("--ofp-port", type=port_number, default=6653,
                   help="OpenFlow listening port (default 6653)")
    p.add_argument("--ofp-host", default="0.0.0.0",
                   help="OpenFlow listening address (default all)")
    p.add_argument("--rest", type=host_port, default=("127.0.0.1", 8080),
                   metavar="HOST:PORT",
                   help="REST/dashboard address (default 127.0.0.1:8080)")
    p.add_argument("--ovsdb", type=ovsdb_remote, action="append", default=[],
                   metavar="DPID=REMOTE",
                   help="the OVSDB remote of the switch with datapath ID "
                   "DPID (hex), e.g. 0000000000000001=tcp:10.0.0.1:6640; "
                   "repeatable")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--check-config", action="store_true",
                   help="check the options and exit")
    args = p.parse_args(rest)
    if args.check_config:
        print("awafs-controller: configuration OK")
        sys.exit(0)
    return args


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else
                        logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s "
                        "%(message)s")
    ken = load()
    # os-ken's native hub (threads) needs nothing; Ryu's eventlet hub needs
    # its sockets made cooperative, as ryu-manager did.
    ken.hub.patch(thread=False)
    manager = ken.app_manager.AppManager.get_instance()
    manager.load_apps([f"{ken.name}.controller.ofp_handler", APP_MODULE])
    ken.cfg.CONF(args=["--ofp-tcp-listen-port", str(args.ofp_port),
                       "--ofp-listen-host", args.ofp_host],
                 project=ken.name)
    services = manager.instantiate_apps(**manager.create_contexts())
    app = manager.applications["AwafsController"]

    api = Api(app.observations,
              {dpid: Ovsdb(remote) for dpid, remote in args.ovsdb})
    logging.getLogger("awafs_controller").info(
        "OpenFlow on %s:%d, REST on http://%s:%d/", args.ofp_host,
        args.ofp_port, *args.rest)
    services.append(ken.hub.spawn(rest_server(ken, args.rest, api)
                                  .serve_forever))
    ken.hub.joinall(services)


if __name__ == "__main__":
    main()

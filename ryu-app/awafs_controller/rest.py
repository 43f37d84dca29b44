"""The REST/JSON API (ryu-app/openapi.yaml), /metrics and the dashboard,
as one WSGI application."""

import json
import re
from http import HTTPStatus
from pathlib import Path

from awafs_controller import config, metrics
from awafs_controller.ovsdb import OvsdbError
from awafs_controller.state import parse_dpid

HERE = Path(__file__).resolve().parent
STATIC = {"/": ("dashboard.html", "text/html"),
          "/dashboard.js": ("dashboard.js", "application/javascript"),
          "/openapi.yaml": ("openapi.yaml", "application/yaml")}
JSON = "application/json"


class HttpError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Api:
    """'observations': the OpenFlow side (state.Observations); 'ovsdb':
    {dpid: ovsdb.Ovsdb} for the switches given with --ovsdb."""

    def __init__(self, observations, ovsdb):
        self.observations = observations
        self.ovsdb = ovsdb
        port = r"/switches/(?P<dpid>[^/]+)/ports/(?P<port>[^/]+)"
        self.routes = [
            ("GET", r"/switches", self.list_switches),
            ("GET", port, self.get_port),
            ("PUT", port + "/config", self.put_config),
            ("PATCH", port + "/config", self.patch_config),
            ("GET", port + "/history", self.get_history),
            ("GET", port + "/rates", self.get_rates),
        ]

    def __call__(self, environ, start_response):
        method, path = environ["REQUEST_METHOD"], environ["PATH_INFO"]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        try:
            status, ctype, data = self._dispatch(method, path, body)
        except HttpError as e:
            status, ctype, data = e.status, JSON, _json({"error": str(e)})
        except OvsdbError as e:
            status, ctype, data = 502, JSON, _json({"error": f"OVSDB: {e}"})
        start_response(f"{status} {HTTPStatus(status).phrase}",
                       [("Content-Type", f"{ctype}; charset=utf-8"),
                        ("Content-Length", str(len(data)))])
        return [data]

    def _dispatch(self, method, path, body):
        """(status, content type, bytes) of a request."""
        if path in STATIC and method == "GET":
            name, ctype = STATIC[path]
            return 200, ctype, (HERE / "static" / name).read_bytes()
        if path == "/metrics" and method == "GET":
            return 200, "text/plain", metrics.render(self.observations)
        allowed = []
        for route_method, pattern, view in self.routes:
            m = re.fullmatch(pattern, path)
            if m and route_method == method:
                return 200, JSON, _json(view(body, **m.groupdict()))
            if m:
                allowed.append(route_method)
        if allowed:
            raise HttpError(405, f"{method} not allowed on {path}")
        raise HttpError(404, f"no resource {path}")

    # ---- lookups ----

    def _switch(self, dpid_text):
        """(dpid, observed switch or None, OVSDB bridge or None)."""
        try:
            dpid = parse_dpid(dpid_text)
        except ValueError:
            raise HttpError(404, f"{dpid_text}: not a datapath ID")
        observed = self.observations.switches.get(dpid)
        db = self.ovsdb.get(dpid)
        bridge = db.bridge(dpid) if db else None
        if observed is None and bridge is None:
            raise HttpError(404, f"unknown switch {dpid}")
        return dpid, observed, bridge

    def _port(self, dpid_text, name):
        dpid, observed, bridge = self._switch(dpid_text)
        if bridge is not None:
            port = bridge["ports"].get(name)
            port_no = port["port_no"] if port else None
        else:
            port = None
            port_no = observed.port_no(name)
        if port is None and port_no is None:
            raise HttpError(404, f"switch {dpid} has no port {name}")
        return dpid, observed, bridge, port, port_no

    # ---- views ----

    def list_switches(self, body):
        dpids = sorted(set(self.observations.switches) | set(self.ovsdb))
        return {"switches": [self._switch_summary(d) for d in dpids]}

    def _switch_summary(self, dpid):
        dpid, observed, bridge = self._switch(dpid)
        if bridge is not None:
            ports = [{"port": name, "port_no": p["port_no"]}
                     for name, p in bridge["ports"].items()
                     if p["qos_type"] == "awafs"]
        else:
            ports = [{"port": observed.port_names.get(n, str(n)),
                      "port_no": n} for n in observed.awafs]
        return {"dpid": dpid,
                "bridge": bridge["name"] if bridge else None,
                "connected": bool(observed and observed.connected),
                "ovsdb": dpid in self.ovsdb,
                "awafs_ports": sorted(ports, key=lambda p: p["port"])}

    def get_port(self, body, dpid, port):
        dpid, observed, bridge, row, port_no = self._port(dpid, port)
        awafs = observed.awafs.get(port_no) if observed else None
        queue_ids = set(awafs["queues"]) if awafs else set()
        if observed:
            queue_ids |= {q for p, q in observed.queue_stats if p == port_no}
        queues = []
        for q in sorted(queue_ids):
            stats = observed.queue_stats.get((port_no, q))
            queues.append({
                "queue_id": q,
                "tx_packets": stats.tx_packets if stats else None,
                "tx_bytes": stats.tx_bytes if stats else None,
                "tx_errors": stats.tx_errors if stats else None,
                "tx_packets_per_s": stats.tx_packets_per_s if stats else None,
                "tx_bytes_per_s": stats.tx_bytes_per_s if stats else None,
                "status": awafs["queues"].get(q) if awafs else None,
            })
        awafs_config = (row["config"] if row and row["qos_type"] == "awafs"
                        else None)
        return {"switch": dpid, "port": port, "port_no": port_no,
                "connected": bool(observed and observed.connected),
                "config": awafs_config,
                "status": awafs["status"] if awafs else None,
                "observed_at": observed.awafs_time if awafs else None,
                "nxst_error": observed.nxst_error if observed else None,
                "queues": queues}

    def get_history(self, body, dpid, port):
        dpid, observed, _, _, port_no = self._port(dpid, port)
        # A copy: the OpenFlow thread appends meanwhile.
        history = list(observed.history.get(port_no, [])) if observed else []
        return {"switch": dpid, "port": port,
                "history": [{"time": s.time, "version": s.version,
                             "samples": s.samples,
                             "thresholds": s.thresholds} for s in history]}

    def get_rates(self, body, dpid, port):
        dpid, observed, _, _, port_no = self._port(dpid, port)
        rates = list(observed.rates.get(port_no, [])) if observed else []
        return {"switch": dpid, "port": port,
                "rates": [{"time": r.time,
                           "completions_per_s": r.completions_per_s,
                           "queues": [{"queue_id": q, **row} for q, row in
                                      sorted(r.queues.items())]}
                          for r in rates]}

    def put_config(self, body, dpid, port):
        return self._write_config(body, dpid, port, replace=True)

    def patch_config(self, body, dpid, port):
        return self._write_config(body, dpid, port, replace=False)

    def _write_config(self, body, dpid_text, port, replace):
        dpid, _, bridge, row, _ = self._port(dpid_text, port)
        if bridge is None:
            raise HttpError(404, f"switch {dpid} has no OVSDB remote "
                            "(--ovsdb)")
        try:
            changes = config.to_other_config(json.loads(body or b"null"))
            current = (row["config"] if row["qos_type"] == "awafs" and
                       not replace else {})
            new = {k: v for k, v in {**current, **changes}.items()
                   if v is not None}
            config.validate(new)
        except ValueError as e:     # JSON and config errors.
            raise HttpError(400, str(e))
        if not self.ovsdb[dpid].set_awafs(dpid, port, new):
            raise HttpError(404, f"switch {dpid} has no port {port}")
        return self.get_port(body, dpid, port)


def _json(obj):
    return json.dumps(obj).encode()

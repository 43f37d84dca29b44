"""A switch's configuration through its OVSDB remote, with OVS's own
Python IDL (pip package 'ovs').

Each call opens its own IDL session, reads or writes, and closes it: a
controller restart or an ovsdb-server restart leaves nothing stale, and the
few REST writes do not need a connection kept in step."""

import time
import warnings

with warnings.catch_warnings():
    # ovs.poller imports eventlet only to see whether it is patched in, and
    # eventlet warns on import that it is deprecated; the app does not use
    # it (os-ken's hub is threads).
    warnings.simplefilter("ignore")
    import ovs.poller

import ovs.db.idl
import ovs.jsonrpc
import ovs.stream

DB = "Open_vSwitch"
COLUMNS = {
    "Bridge": ["name", "datapath_id", "ports"],
    "Port": ["name", "interfaces", "qos"],
    "Interface": ["name", "ofport"],
    "QoS": ["type", "other_config"],
}
TIMEOUT = 10.0


class OvsdbError(RuntimeError):
    pass


def _block(poller_setup, deadline, what):
    if time.monotonic() > deadline:
        raise OvsdbError(f"timed out: {what}")
    poller = ovs.poller.Poller()
    poller_setup(poller)
    poller.timer_wait(100)
    poller.block()


def fetch_schema(remote):
    error, stream = ovs.stream.Stream.open_block(
        ovs.stream.Stream.open(remote), int(TIMEOUT * 1000))
    if error:
        raise OvsdbError(f"{remote}: {error}")
    rpc = ovs.jsonrpc.Connection(stream)
    try:
        error, reply = rpc.transact_block(
            ovs.jsonrpc.Message.create_request("get_schema", [DB]))
    finally:
        rpc.close()
    if error or reply.error:
        raise OvsdbError(f"{remote}: get_schema: {error or reply.error}")
    return reply.result


class Ovsdb:
    """One switch's OVSDB remote (an ovsdb-server 'p...' remote such as
    unix:/path or tcp:host:port)."""

    def __init__(self, remote):
        self.remote = remote
        self._schema = None

    def _session(self):
        if self._schema is None:
            self._schema = fetch_schema(self.remote)
        helper = ovs.db.idl.SchemaHelper(schema_json=self._schema)
        for table, columns in COLUMNS.items():
            helper.register_columns(table, columns)
        idl = ovs.db.idl.Idl(self.remote, helper)
        deadline = time.monotonic() + TIMEOUT
        seqno = idl.change_seqno
        while True:
            idl.run()
            if idl.change_seqno != seqno:
                return idl
            _block(idl.wait, deadline, f"{self.remote}: initial contents")

    @staticmethod
    def _bridge(idl, dpid):
        for br in idl.tables["Bridge"].rows.values():
            if br.datapath_id and br.datapath_id[0] == dpid:
                return br
        return None

    def bridge(self, dpid):
        """The bridge with datapath ID 'dpid' (16 hex digits) as
        {"name": ..., "ports": {port name: {"port_no": ..., "qos_type":
        ..., "config": {...}}}}, or None."""
        idl = self._session()
        try:
            br = self._bridge(idl, dpid)
            if br is None:
                return None
            ports = {}
            for port in br.ports:
                ofports = [i.ofport[0] for i in port.interfaces
                           if i.name == port.name and i.ofport]
                qos = port.qos[0] if port.qos else None
                ports[port.name] = {
                    "port_no": ofports[0] if ofports else None,
                    "qos_type": qos.type if qos else None,
                    "config": dict(qos.other_config) if qos else None,
                }
            return {"name": br.name, "ports": ports}
        finally:
            idl.close()

    def set_awafs(self, dpid, port_name, other_config):
        """Makes the QoS of port 'port_name' an awafs QoS with exactly
        'other_config' (the port's QoS row is changed in place; a port
        without one gets a new one).  False if there is no such port."""
        idl = self._session()
        try:
            deadline = time.monotonic() + TIMEOUT
            while True:
                br = self._bridge(idl, dpid)
                port = next((p for p in br.ports if p.name == port_name),
                            None) if br else None
                if port is None:
                    return False
                txn = ovs.db.idl.Transaction(idl)
                if port.qos:
                    qos = port.qos[0]
                else:
                    qos = txn.insert(idl.tables["QoS"])
                    port.qos = [qos]
                qos.type = "awafs"
                qos.other_config = other_config
                status = txn.commit_block()
                if status in (txn.SUCCESS, txn.UNCHANGED):
                    return True
                if status != txn.TRY_AGAIN:
                    raise OvsdbError(f"{self.remote}: transaction "
                                     f"{status}: {txn.get_error()}")
                _block(idl.wait, deadline, "transaction retry")
                idl.run()
        finally:
            idl.close()

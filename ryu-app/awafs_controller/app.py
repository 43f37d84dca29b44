"""The os-ken (or Ryu) application: keeps the OpenFlow 1.3 connections of
the switches and polls each every POLL_PERIOD seconds for its port names,
its queue statistics and NXST_AWAFS."""

import logging
import time

from awafs_controller import nxst
from awafs_controller.compat import load
from awafs_controller.state import Observations, dpid_str

ken = load()
handler, ofp_event = ken.handler, ken.ofp_event
MAIN, DEAD = handler.MAIN_DISPATCHER, handler.DEAD_DISPATCHER

POLL_PERIOD = 1.0       # Seconds; the REST API's and /metrics' freshness.

LOG = logging.getLogger("awafs_controller")


class AwafsController(ken.App):
    OFP_VERSIONS = [ken.ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.observations = Observations()
        self.datapaths = {}         # dpid string -> connected datapath.
        self._parts = {}            # (dpid, xid) -> multipart bodies so far.
        self._nxst_xid = {}         # dpid string -> last NXST_AWAFS xid.

    def start(self):
        thread = super().start()
        self.threads.append(ken.hub.spawn(self._poll_loop))
        return thread

    def _poll_loop(self):
        while True:
            for dp in list(self.datapaths.values()):
                self._request(dp)
            ken.hub.sleep(POLL_PERIOD)

    def _request(self, dp):
        ofp, parser = dp.ofproto, dp.ofproto_parser
        dp.send_msg(parser.OFPPortDescStatsRequest(dp, 0))
        dp.send_msg(parser.OFPQueueStatsRequest(dp, 0, ofp.OFPP_ANY,
                                                ofp.OFPQ_ALL))
        req = parser.OFPExperimenterStatsRequest(
            dp, 0, nxst.NX_VENDOR_ID, nxst.EXP_TYPE, nxst.request_body())
        dp.send_msg(req)
        self._nxst_xid[dpid_str(dp.id)] = req.xid

    def _gather(self, msg, part):
        """The parts of a multipart reply once its last one arrived."""
        key = (msg.datapath.id, msg.xid)
        self._parts.setdefault(key, []).append(part)
        if msg.flags & msg.datapath.ofproto.OFPMPF_REPLY_MORE:
            return None
        return self._parts.pop(key)

    @handler.set_ev_cls(ofp_event.EventOFPStateChange, [MAIN, DEAD])
    def _state_change(self, ev):
        dp = ev.datapath
        if dp.id is None:
            return
        dpid = dpid_str(dp.id)
        sw = self.observations.switch(dpid)
        if ev.state == MAIN:
            LOG.info("switch %s connected", dpid)
            self.datapaths[dpid] = dp
            sw.connected = True
            self._request(dp)
        elif self.datapaths.get(dpid) is dp:
            LOG.info("switch %s disconnected", dpid)
            del self.datapaths[dpid]
            sw.connected = False
            # Replies cut short by the disconnection never complete.
            self._parts = {k: v for k, v in self._parts.items()
                           if k[0] != dp.id}

    @handler.set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN)
    def _port_desc(self, ev):
        parts = self._gather(ev.msg, ev.msg.body)
        if parts is not None:
            sw = self.observations.switch(dpid_str(ev.msg.datapath.id))
            sw.port_names = {p.port_no: _text(p.name)
                             for body in parts for p in body}

    @handler.set_ev_cls(ofp_event.EventOFPQueueStatsReply, MAIN)
    def _queue_stats(self, ev):
        parts = self._gather(ev.msg, ev.msg.body)
        if parts is not None:
            sw = self.observations.switch(dpid_str(ev.msg.datapath.id))
            sw.update_queue_stats(time.time(), [
                (s.port_no, s.queue_id, s.tx_packets, s.tx_bytes,
                 s.tx_errors) for body in parts for s in body])

    @handler.set_ev_cls(ofp_event.EventOFPExperimenterStatsReply, MAIN)
    def _experimenter_stats(self, ev):
        body = ev.msg.body
        if (body.experimenter, body.exp_type) != (nxst.NX_VENDOR_ID,
                                                  nxst.EXP_TYPE):
            return
        parts = self._gather(ev.msg, bytes(body.data))
        if parts is None:
            return
        sw = self.observations.switch(dpid_str(ev.msg.datapath.id))
        try:
            sw.update_awafs(time.time(), nxst.decode_entries(b"".join(parts)))
        except nxst.DecodeError as e:
            self._nxst_failed(sw, f"NXST_AWAFS reply not decoded: {e}")

    @handler.set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN)
    def _error(self, ev):
        msg = ev.msg
        dpid = dpid_str(msg.datapath.id)
        if msg.xid == self._nxst_xid.get(dpid):
            self._nxst_failed(self.observations.switch(dpid),
                              f"switch refused NXST_AWAFS (OpenFlow error "
                              f"type {msg.type} code {msg.code})")

    @staticmethod
    def _nxst_failed(sw, reason):
        if sw.nxst_error != reason:
            LOG.warning("switch %s: %s", sw.dpid, reason)
        sw.nxst_error = reason


def _text(name):
    return name.decode(errors="replace") if isinstance(name, bytes) else name

"""/metrics: the observations in Prometheus's text format.  Counters get
'_total' appended by the client library."""

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

PORT, QUEUE = ["switch", "port"], ["switch", "port", "queue"]

# NXST_AWAFS keys exported: (metric class, help) by key.
PORT_KEYS = {
    "completions": (CounterMetricFamily,
                    "Completions the port learned from"),
    "completions-dropped": (CounterMetricFamily,
                            "Completions lost to a full completion ring"),
    "completions-limited": (CounterMetricFamily,
                            "Completions refused by completion-rate-limit"),
    "recalc-runs": (CounterMetricFamily, "Threshold recalculations"),
    "deadline-packets": (CounterMetricFamily,
                         "Karuna: packets of flows with a deadline"),
    "sized-packets": (CounterMetricFamily,
                      "Karuna: packets of flows of known size"),
    "unknown-size-packets": (CounterMetricFamily,
                             "Karuna: packets of flows of unknown size"),
    "karuna-oversize": (CounterMetricFamily,
                        "Karuna: packets of flows past their declared size"),
    "timeouts": (CounterMetricFamily,
                 "Retransmission timeouts seen by the flow table"),
    "aged-flows": (CounterMetricFamily, "Messages aged by their timeouts"),
    "ecn-marks": (CounterMetricFamily, "Packets marked CE"),
    "thresholds-version": (GaugeMetricFamily,
                           "Version of the current thresholds"),
    "window-samples": (GaugeMetricFamily,
                       "Flow sizes in the adaptation window"),
    "backlog-packets": (GaugeMetricFamily, "Packets queued on the port"),
}
QUEUE_KEYS = {
    "dropped-packets": (CounterMetricFamily, "Packets dropped"),
    "ecn-marks": (CounterMetricFamily, "Packets marked CE"),
    "backlog-packets": (GaugeMetricFamily, "Packets in the queue"),
}


class Collector:
    def __init__(self, observations):
        self.observations = observations

    def collect(self):
        families = {}

        def add(cls, name, doc, labels, values, value):
            if name not in families:
                families[name] = cls(name, doc, labels=labels)
            families[name].add_metric(values, value)

        for dpid, sw in sorted(self.observations.switches.items()):
            add(GaugeMetricFamily, "awafs_switch_connected",
                "1 while the switch's OpenFlow connection is up", ["switch"],
                [dpid], float(sw.connected))
            for (port_no, queue_id), st in sorted(sw.queue_stats.items()):
                labels = [dpid, sw.port_names.get(port_no, str(port_no)),
                          str(queue_id)]
                for key in ("tx_packets", "tx_bytes", "tx_errors"):
                    add(CounterMetricFamily, f"awafs_queue_{key}",
                        f"OpenFlow queue statistics: {key}", QUEUE, labels,
                        getattr(st, key))
            for port_no, port in sorted(sw.awafs.items()):
                labels = [dpid, sw.port_names.get(port_no, str(port_no))]
                status = port["status"]
                for i, v in enumerate(filter(None, status.get(
                        "current-thresholds", "").split(","))):
                    add(GaugeMetricFamily, "awafs_threshold_bytes",
                        "Current demotion threshold below queue 'index'",
                        PORT + ["index"], labels + [str(i)], int(v))
                for key, (cls, doc) in PORT_KEYS.items():
                    if key in status:
                        add(cls, "awafs_" + key.replace("-", "_"), doc, PORT,
                            labels, int(status[key]))
                for queue_id, qstatus in sorted(port["queues"].items()):
                    for key, (cls, doc) in QUEUE_KEYS.items():
                        if key in qstatus:
                            add(cls, "awafs_queue_" + key.replace("-", "_"),
                                doc, QUEUE, labels + [str(queue_id)],
                                int(qstatus[key]))
        yield from families.values()


def render(observations):
    registry = CollectorRegistry()
    registry.register(Collector(observations))
    return generate_latest(registry)

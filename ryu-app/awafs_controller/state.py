"""What the app has observed of each switch over OpenFlow: port names,
queue statistics with rates, the NXST_AWAFS entries, and the thresholds
history it has polled."""

from collections import deque
from dataclasses import dataclass

HISTORY_LEN = 3600      # Threshold changes kept per port.
RATES_LEN = 600         # Polls' rates kept per port (10 min at 1 s).

# Queue counters of NXST_AWAFS whose rate each poll records, by the name of
# the rate; and the levels recorded as they are.
QUEUE_RATES = {"tx_bytes_per_s": "tx_bytes",
               "dropped_packets_per_s": "dropped-packets",
               "dropped_bytes_per_s": "dropped-bytes"}
QUEUE_LEVELS = {"backlog_bytes": "backlog-bytes",
                "backlog_packets": "backlog-packets"}


def dpid_str(dpid):
    """A datapath ID as OVSDB's Bridge.datapath_id writes it."""
    return f"{dpid:016x}"


def parse_dpid(text):
    """A datapath ID given as hex digits (with or without 0x) in its
    canonical 16-digit form; ValueError if it is not one."""
    value = int(text, 16)
    if not 0 <= value < 1 << 64:
        raise ValueError(f"{text}: not a 64-bit datapath ID")
    return dpid_str(value)


@dataclass
class QueueStats:
    time: float
    tx_packets: int
    tx_bytes: int
    tx_errors: int
    tx_packets_per_s: float = 0.0
    tx_bytes_per_s: float = 0.0


@dataclass
class RateSample:
    """One poll of a port: completions a second and, by queue ID, the
    rates of QUEUE_RATES and the levels of QUEUE_LEVELS (None where the
    reply lacks a key, or a counter went back: a new QoS)."""
    time: float
    completions_per_s: float | None
    queues: dict


@dataclass
class ThresholdSample:
    time: float
    version: int
    samples: int
    thresholds: list


class SwitchState:
    def __init__(self, dpid):
        self.dpid = dpid
        self.connected = False
        self.port_names = {}        # OpenFlow port number -> name.
        self.queue_stats = {}       # (port_no, queue_id) -> QueueStats.
        self.awafs = {}             # port_no -> {"status", "queues"}.
        self.awafs_time = None
        self.nxst_error = None
        self.history = {}           # port_no -> deque of ThresholdSample.
        self.rates = {}             # port_no -> deque of RateSample.

    def port_no(self, name):
        return next((n for n, p in self.port_names.items() if p == name),
                    None)

    def update_queue_stats(self, now, rows):
        """'rows': (port_no, queue_id, tx_packets, tx_bytes, tx_errors)."""
        stats = {}
        for port_no, queue_id, packets, nbytes, errors in rows:
            new = QueueStats(now, packets, nbytes, errors)
            old = self.queue_stats.get((port_no, queue_id))
            if old and now > old.time and packets >= old.tx_packets:
                dt = now - old.time
                new.tx_packets_per_s = (packets - old.tx_packets) / dt
                new.tx_bytes_per_s = (nbytes - old.tx_bytes) / dt
            stats[(port_no, queue_id)] = new
        self.queue_stats = stats

    def update_awafs(self, now, entries):
        """Takes the decoded NXST_AWAFS entries of every port; records
        each port's thresholds when their version changed."""
        awafs = {}
        for e in entries:
            if e.queue_id is None:
                awafs[e.port_no] = {"status": e.values, "queues": {}}
            elif e.port_no in awafs:
                awafs[e.port_no]["queues"][e.queue_id] = e.values
        for port_no, port in awafs.items():
            self._record_thresholds(now, port_no, port["status"])
            if self.awafs_time is not None and now > self.awafs_time:
                self._record_rates(now, port_no, port)
        self.awafs, self.awafs_time, self.nxst_error = awafs, now, None

    def _record_rates(self, now, port_no, port):
        """The rates since the previous reply, if the port was in it."""
        old = self.awafs.get(port_no)
        if old is None:
            return
        dt = now - self.awafs_time
        queues = {}
        for q, status in port["queues"].items():
            before = old["queues"].get(q, {})
            row = {name: _rate(status, before, key, dt)
                   for name, key in QUEUE_RATES.items()}
            row.update({name: _int(status, key)
                        for name, key in QUEUE_LEVELS.items()})
            queues[q] = row
        sample = RateSample(now, _rate(port["status"], old["status"],
                                       "completions", dt), queues)
        self.rates.setdefault(port_no, deque(maxlen=RATES_LEN)).append(sample)

    def _record_thresholds(self, now, port_no, status):
        if "current-thresholds" not in status:
            return
        sample = ThresholdSample(
            now, int(status.get("thresholds-version", 0)),
            int(status.get("thresholds-samples", 0)),
            [int(v) for v in status["current-thresholds"].split(",")])
        history = self.history.setdefault(port_no, deque(maxlen=HISTORY_LEN))
        if not history or (history[-1].version, history[-1].thresholds) != (
                sample.version, sample.thresholds):
            history.append(sample)


def _int(values, key):
    return int(values[key]) if key in values else None


def _rate(now, before, key, dt):
    """Counter 'key''s rate between two replies' values, per second."""
    new, old = _int(now, key), _int(before, key)
    if new is None or old is None or new < old:
        return None
    return (new - old) / dt


class Observations:
    """Every switch the app has seen, by datapath ID (16 hex digits)."""

    def __init__(self):
        self.switches = {}

    def switch(self, dpid):
        return self.switches.setdefault(dpid, SwitchState(dpid))

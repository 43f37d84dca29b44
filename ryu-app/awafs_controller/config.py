"""An awafs QoS's other_config: from REST JSON to OVSDB strings, and the
switch's own validation of it (awafs_qos_parse in
netdev-ext/netdev-dpdk-awafs.c), with the switch's messages, so that the REST API
refuses exactly what the switch would refuse."""

import re

# The keys the switch knows, in its order.
KEYS = ("queues", "mode", "thresholds", "percentiles", "window-ms",
        "interval-ms", "min-samples", "window-type", "window-capacity",
        "max-rate", "buffer", "ecn-threshold", "ecn-mode", "max-wait-us",
        "default-queue", "trust", "idle-us", "flow-table-size",
        "completion-ring-size", "completion-rate-limit", "tardy",
        "tardy-limit", "karuna", "size-thresholds", "size-percentiles",
        "aging", "aging-min-timeouts", "aging-max-timeouts", "rto-min-us",
        "tunnel")

MIN_QUEUES, MAX_QUEUES, DEFAULT_QUEUES = 2, 8, 4
FLOW_SIZE_MAX = 0xffffffff
MAX_PERIOD_MS = 60000
DEFAULT_WINDOW_CAPACITY = 32768
DEFAULT_BUFFER = 1024
MAX_BUFFER = 65536
MAX_RATE = 400000000000
RING_MAX = 1 << 24
U64_MAX = (1 << 64) - 1
MAX_KAPPA = 15                  # AWAFS_FLOWTAB_MAX_KAPPA

# What C's strtoull() and strtod() take whole (OVS's str_to_ullong(),
# str_to_double()).
_ULL = re.compile(r"\s*([+-]?)(\d+)")
_DOUBLE = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
                     r"|\s*[+-]?(inf|infinity|nan)", re.I)
_HEX_DOUBLE = re.compile(r"\s*[+-]?0x([\da-f]+\.?[\da-f]*|\.[\da-f]+)"
                         r"(p[+-]?\d+)?", re.I)


class ConfigError(ValueError):
    pass


def to_other_config(body):
    """A REST JSON object as OVSDB other_config strings: integers and
    strings as they are, lists of numbers comma-separated.  null is kept
    (PATCH: remove the key)."""
    if not isinstance(body, dict):
        raise ConfigError("the body must be a JSON object of keys")
    out = {}
    for key, value in body.items():
        if value is None or isinstance(value, str):
            out[key] = value
        elif _is_number(value):
            out[key] = str(value)
        elif isinstance(value, list) and value and all(map(_is_number,
                                                           value)):
            out[key] = ",".join(map(str, value))
        else:
            raise ConfigError(f"{key}: {value!r} is not a string, a number "
                              "or a list of numbers")
    return out


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _ullong(s):
    m = _ULL.fullmatch(s)
    if not m:
        return None
    v = int(m.group(2))
    if v > U64_MAX:
        return None
    return (-v) % (1 << 64) if m.group(1) == "-" else v


def _uint(cfg, key, lo, hi, default):
    s = cfg.get(key)
    if s is None:
        return default
    v = _ullong(s)
    if v is None or v < lo or v > hi:
        raise ConfigError(f'{key}: "{s}" is not an integer between {lo} and '
                          f'{hi}')
    return v


def _choice(cfg, key, names, message):
    s = cfg.get(key, names[0])
    if s not in names:
        raise ConfigError(f'{key}: "{s}" {message}')
    return s


def _list(cfg, key, n, parse_item):
    s = cfg.get(key)
    if s is None:
        return None
    tokens = [t for t in re.split(r"[, ]", s) if t]
    values = [parse_item(key, t) for t in tokens[:n]]
    if len(tokens) != n:
        raise ConfigError(f"{key}: {n + 1} queues need {n} values, got "
                          f"{len(tokens)}")
    return values


def _byte_count(key, tok):
    v = _ullong(tok)
    if v is None or v > FLOW_SIZE_MAX:
        raise ConfigError(f'{key}: "{tok}" is not a byte count (0 to '
                          f'{FLOW_SIZE_MAX})')
    return v


def _percentile_milli(key, tok):
    if _DOUBLE.fullmatch(tok):
        d = float(tok)
    elif _HEX_DOUBLE.fullmatch(tok):
        d = float.fromhex(tok)
    else:
        d = None
    milli = int(d * 1000 + 0.5) if d is not None and 0 < d < 100 else 0
    if not milli or milli >= 100000:
        raise ConfigError(f'{key}: "{tok}" is not a percentile in (0, 100)')
    return milli


def validate(cfg):
    """Raises ConfigError with the switch's message if the switch would
    refuse other_config 'cfg' ({key: string})."""
    for key in sorted(cfg):
        if key not in KEYS:
            raise ConfigError(f'unknown key "{key}"')
    n = _uint(cfg, "queues", MIN_QUEUES, MAX_QUEUES, DEFAULT_QUEUES)
    karuna = _choice(cfg, "karuna", ("off", "on"),
                     'is neither "on" nor "off"') == "on"
    if karuna and n < 3:
        raise ConfigError(f"karuna: {n} queues cannot hold the queue "
                          "reserved for deadline flows and two for the "
                          "others (queues must be at least 3)")
    # With karuna, the sieve has the queues below the deadline queue.
    sieve = n - karuna
    _choice(cfg, "mode", ("adaptive", "static"),
            'is neither "adaptive" nor "static"')
    _choice(cfg, "window-type", ("histogram", "exact"),
            'is neither "histogram" nor "exact"')
    # The core's defaults (awafs_config_default): 7 kB, 14 kB, ... and
    # 10 %, 20 %, ...
    default_thresholds = [(i + 1) * 7000 for i in range(sieve - 1)]
    default_percentiles = [(i + 1) * 10000 for i in range(sieve - 1)]
    thresholds = (_list(cfg, "thresholds", sieve - 1, _byte_count)
                  or default_thresholds)
    percentiles = (_list(cfg, "percentiles", sieve - 1, _percentile_milli)
                   or default_percentiles)
    sizes, size_pcts = default_thresholds, default_percentiles
    if karuna:
        sizes = _list(cfg, "size-thresholds", sieve - 1, _byte_count) or sizes
        size_pcts = (_list(cfg, "size-percentiles", sieve - 1,
                           _percentile_milli) or size_pcts)
    elif "size-thresholds" in cfg or "size-percentiles" in cfg:
        raise ConfigError("size-thresholds, size-percentiles: only with "
                          "karuna=on")
    _uint(cfg, "window-ms", 1, MAX_PERIOD_MS, None)
    _uint(cfg, "interval-ms", 1, MAX_PERIOD_MS, None)
    capacity = _uint(cfg, "window-capacity", 16, RING_MAX,
                     DEFAULT_WINDOW_CAPACITY)
    _uint(cfg, "completion-ring-size", 16, RING_MAX, None)
    _uint(cfg, "min-samples", 1, capacity, None)
    rate = _uint(cfg, "max-rate", 0, MAX_RATE, None)
    if rate and rate < 8:
        raise ConfigError(f"max-rate: {rate} bit/s is less than a byte a "
                          "second (0: shaped to the link)")
    buffer = _uint(cfg, "buffer", 1, MAX_BUFFER, DEFAULT_BUFFER)
    _uint(cfg, "ecn-threshold", 0, buffer, None)
    _choice(cfg, "ecn-mode", ("port", "queue"),
            'is neither "port" nor "queue"')
    _uint(cfg, "max-wait-us", 0, 60000000, None)
    if _uint(cfg, "default-queue", 0, n - 1, n - 1) == 0 and karuna:
        raise ConfigError("default-queue: queue 0 is reserved for deadline "
                          "flows with karuna=on")
    _choice(cfg, "trust", ("host", "switch", "verify"),
            'is not "host", "switch" or "verify"')
    _uint(cfg, "idle-us", 1, 60000000, None)
    _uint(cfg, "flow-table-size", 8, 1 << 20, None)
    _uint(cfg, "completion-rate-limit", 0, 1000000, None)
    tardy = _choice(cfg, "tardy", ("off", "tfs", "tfs+"),
                    'is not "off", "tfs" or "tfs+"')
    if tardy != "off" and cfg.get("trust", "host") == "host":
        raise ConfigError(f'tardy: "{tardy}" needs trust=switch or '
                          "trust=verify (only the switch's flow table sees "
                          "retransmissions)")
    if tardy != "off" and karuna:
        raise ConfigError(f'tardy: "{tardy}" cannot go with karuna=on, which '
                          "reserves queue 0 for deadline flows")
    _uint(cfg, "tardy-limit", 1, FLOW_SIZE_MAX, None)
    aging = _choice(cfg, "aging", ("off", "on"),
                    'is neither "on" nor "off"') == "on"
    if aging and not karuna:
        raise ConfigError("aging: needs karuna=on")
    if aging and cfg.get("trust", "host") == "host":
        raise ConfigError("aging: needs trust=switch or trust=verify (only "
                          "the switch's flow table sees timeouts)")
    kappa_min = _uint(cfg, "aging-min-timeouts", 1, MAX_KAPPA, 2)
    kappa_max = _uint(cfg, "aging-max-timeouts", 1, MAX_KAPPA, 10)
    if kappa_min > kappa_max:
        raise ConfigError(f"aging-min-timeouts: {kappa_min} is above "
                          f"aging-max-timeouts ({kappa_max})")
    _uint(cfg, "rto-min-us", 1, 60000000, None)
    _choice(cfg, "tunnel", ("auto", "off"), 'is neither "auto" nor "off"')
    # The core's own check (awafs_config_check in lib/awafs-adapt.c), of
    # the sieve's and, with karuna, the known sizes' thresholds.
    _check_core(percentiles, thresholds, "")
    if karuna:
        _check_core(size_pcts, sizes, "size-")


def _check_core(percentiles, thresholds, prefix):
    for i in range(1, len(percentiles)):
        if percentiles[i] <= percentiles[i - 1]:
            raise ConfigError(f"{prefix}percentiles must be strictly "
                              "increasing")
        if thresholds[i] < thresholds[i - 1]:
            raise ConfigError(f"{prefix}thresholds must be non-decreasing")

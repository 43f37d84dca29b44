"""An awafs QoS's other_config: from REST JSON to OVSDB strings, and the
switch's own validation of it (awafs_qos_parse in
netdev-ext/netdev-dpdk-awafs.c), with the switch's messages, so that the REST API
refuses exactly what the switch would refuse."""

import re

from .keys import BY_NAME, KEYS

U64_MAX = (1 << 64) - 1

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


def _range_error(key, s, hi):
    return ConfigError(f'{key.name}: "{s}" is not an integer between '
                       f'{key.min} and {hi}')


def _choice_error(key, s):
    quoted = [f'"{c}"' for c in key.choices]
    if len(quoted) == 2:
        return ConfigError(f'{key.name}: "{s}" is neither {quoted[0]} nor '
                           f'{quoted[1]}')
    return ConfigError(f'{key.name}: "{s}" is not {", ".join(quoted[:-1])} '
                       f'or {quoted[-1]}')


def _scalars(cfg):
    """{name: value} of every UINT and ENUM key (an ENUM as its choice),
    each absent key with its default (None if the switch computes it), in
    the table's order: awafs_parse_scalars()."""
    values = {}
    for key in KEYS:
        s = cfg.get(key.name)
        if key.type == "UINT":
            v = key.default_value() if s is None else _ullong(s)
            if s is not None and (v is None or not key.min <= v <= key.max):
                raise _range_error(key, s, key.max)
            values[key.name] = v
        elif key.type == "ENUM":
            s = key.default if s is None else s
            if s not in key.choices:
                raise _choice_error(key, s)
            values[key.name] = s
    return values


def _at_most(cfg, values, name, hi):
    """awafs_key_at_most(): a key set above a bound another key sets."""
    if name in cfg and values[name] > hi:
        raise _range_error(BY_NAME[name], cfg[name], hi)


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
    k = BY_NAME[key]
    v = _ullong(tok)
    if v is None or not k.min <= v <= k.max:
        raise ConfigError(f'{key}: "{tok}" is not a byte count ({k.min} to '
                          f'{k.max})')
    return v


def _percentile_milli(key, tok):
    if _DOUBLE.fullmatch(tok):
        d = float(tok)
    elif _HEX_DOUBLE.fullmatch(tok):
        d = float.fromhex(tok)
    else:
        d = None
    k = BY_NAME[key]
    milli = (int(d * 1000 + 0.5) if d is not None and k.min < d < k.max
             else 0)
    if not milli or milli >= k.max * 1000:
        raise ConfigError(f'{key}: "{tok}" is not a percentile in '
                          f'({k.min}, {k.max})')
    return milli


def validate(cfg):
    """Raises ConfigError with the switch's message if the switch would
    refuse other_config 'cfg' ({key: string}), in awafs_qos_parse()'s
    order."""
    for key in sorted(cfg):
        if key not in BY_NAME:
            raise ConfigError(f'unknown key "{key}"')
    values = _scalars(cfg)
    n = values["queues"]
    karuna = values["karuna"] == "on"
    if karuna and n < 3:
        raise ConfigError(f"karuna: {n} queues cannot hold the queue "
                          "reserved for deadline flows and two for the "
                          "others (queues must be at least 3)")
    # With karuna, the sieve has the queues below the deadline queue.
    sieve = n - karuna
    # The core's defaults (awafs_config_default): 7 kB, 14 kB, ... and
    # 10 %, 20 %, ...
    default_thresholds = [(i + 1) * 7000 for i in range(sieve - 1)]
    default_percentiles = [(i + 1) * 10000 for i in range(sieve - 1)]
    thresholds = (_list(cfg, "thresholds", sieve - 1, _byte_count)
                  or default_thresholds)
    # Bounds of the learned thresholds (none by default: _check_core()).
    lows = _list(cfg, "min-thresholds", sieve - 1, _byte_count)
    highs = _list(cfg, "max-thresholds", sieve - 1, _byte_count)
    if cfg.get("percentiles") == "auto":
        # The thresholds that minimise the FCT model (lib/awafs.h).
        if karuna:
            raise ConfigError('percentiles: "auto" cannot go with karuna=on')
        percentiles = default_percentiles
        if "short-size" in cfg and cfg.get("objective") != "short":
            raise ConfigError("short-size: only with objective=short")
    elif "objective" in cfg:
        raise ConfigError("objective: only with percentiles=auto")
    elif "short-size" in cfg:
        raise ConfigError("short-size: only with objective=short")
    else:
        percentiles = (_list(cfg, "percentiles", sieve - 1,
                             _percentile_milli) or default_percentiles)
    sizes, size_pcts = default_thresholds, default_percentiles
    if karuna:
        sizes = _list(cfg, "size-thresholds", sieve - 1, _byte_count) or sizes
        size_pcts = (_list(cfg, "size-percentiles", sieve - 1,
                           _percentile_milli) or size_pcts)
    elif "size-thresholds" in cfg or "size-percentiles" in cfg:
        raise ConfigError("size-thresholds, size-percentiles: only with "
                          "karuna=on")
    _at_most(cfg, values, "min-samples", values["window-capacity"])
    rate = values["max-rate"]
    if rate and rate < 8:
        raise ConfigError(f"max-rate: {rate} bit/s is less than a byte a "
                          "second (0: shaped to the link)")
    _at_most(cfg, values, "ecn-threshold", values["buffer"])
    if "default-queue" not in cfg:
        values["default-queue"] = n - 1
    _at_most(cfg, values, "default-queue", n - 1)
    if values["default-queue"] == 0 and karuna:
        raise ConfigError("default-queue: queue 0 is reserved for deadline "
                          "flows with karuna=on")
    tardy, trust = values["tardy"], values["trust"]
    if tardy != "off" and trust == "host":
        raise ConfigError(f'tardy: "{tardy}" needs trust=switch or '
                          "trust=verify (only the switch's flow table sees "
                          "retransmissions)")
    if tardy != "off" and karuna:
        raise ConfigError(f'tardy: "{tardy}" cannot go with karuna=on, which '
                          "reserves queue 0 for deadline flows")
    aging = values["aging"] == "on"
    if aging and not karuna:
        raise ConfigError("aging: needs karuna=on")
    if aging and trust == "host":
        raise ConfigError("aging: needs trust=switch or trust=verify (only "
                          "the switch's flow table sees timeouts)")
    kappa_min = values["aging-min-timeouts"]
    kappa_max = values["aging-max-timeouts"]
    if kappa_min > kappa_max:
        raise ConfigError(f"aging-min-timeouts: {kappa_min} is above "
                          f"aging-max-timeouts ({kappa_max})")
    # The core's own check (awafs_config_check in lib/awafs-adapt.c), of
    # the sieve's and, with karuna, the known sizes' thresholds.
    adaptive = values["mode"] == "adaptive"
    _check_core(percentiles, thresholds, "", adaptive, lows, highs)
    if (values["window-weight"] == "source"
            and values["window-type"] != "histogram"):
        raise ConfigError("window-weight=source needs window-type=histogram")
    if karuna:
        _check_core(size_pcts, sizes, "size-", adaptive)


def _check_core(percentiles, thresholds, prefix, adaptive, lows=None,
                highs=None):
    lows = lows or [0] * len(thresholds)
    highs = highs or [2**64 - 1] * len(thresholds)
    for i in range(len(percentiles)):
        if i and percentiles[i] <= percentiles[i - 1]:
            raise ConfigError(f"{prefix}percentiles must be strictly "
                              "increasing")
        if i and thresholds[i] < thresholds[i - 1]:
            raise ConfigError(f"{prefix}thresholds must be non-decreasing")
        if i and (lows[i] < lows[i - 1] or highs[i] < highs[i - 1]):
            raise ConfigError("min-thresholds and max-thresholds must be "
                              "non-decreasing")
        if lows[i] > highs[i]:
            raise ConfigError("min-thresholds must not be above "
                              "max-thresholds")
        if adaptive and not lows[i] <= thresholds[i] <= highs[i]:
            raise ConfigError("thresholds must lie within min-thresholds "
                              "and max-thresholds")

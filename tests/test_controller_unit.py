"""The controller app's pure parts (ryu-app/awafs_controller): the import
layer, the property table, the NXST_AWAFS decoder and text, the REST
config's conversion and validation, the OpenAPI file."""

import json
import re
import struct
import subprocess
import types

import pytest
import yaml

from awafs_controller import compat, config, keys, nxst, props
from testbed.traffic import core_constants
from tests.conftest import BIN, REPO

VECTOR = REPO / "ofproto-ext" / "tests" / "nxst-awafs-reply.hex"


# ---- compat: os_ken or else ryu ----

def fake_framework(name, app_class="RyuApp", missing=()):
    """{module name: module} of a framework with every module compat uses,
    but 'missing'."""
    modules = {}
    for path in compat.MODULES.values():
        if path not in missing:
            modules[f"{name}.{path}"] = types.ModuleType(f"{name}.{path}")
    app_manager = modules.get(f"{name}.base.app_manager")
    if app_manager and app_class:
        setattr(app_manager, app_class, type(app_class, (), {}))
    return modules


def importer(modules):
    def import_module(name):
        if name not in modules:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return modules[name]
    return import_module


def test_compat_prefers_os_ken():
    modules = {**fake_framework("os_ken", "OSKenApp"), **fake_framework("ryu")}
    ken = compat.load(import_module=importer(modules))
    assert ken.name == "os_ken" and ken.App.__name__ == "OSKenApp"
    assert ken.hub is modules["os_ken.lib.hub"]


def test_compat_falls_back_to_ryu():
    modules = fake_framework("ryu")
    ken = compat.load(import_module=importer(modules))
    assert ken.name == "ryu" and ken.App.__name__ == "RyuApp"
    assert ken.ofproto_v1_3 is modules["ryu.ofproto.ofproto_v1_3"]


def test_compat_skips_a_framework_missing_a_module():
    modules = {**fake_framework("os_ken", "OSKenApp", missing=("lib.hub",)),
               **fake_framework("ryu")}
    assert compat.load(import_module=importer(modules)).name == "ryu"


def test_compat_skips_a_framework_without_an_app_class():
    modules = {**fake_framework("os_ken", app_class=None),
               **fake_framework("ryu")}
    assert compat.load(import_module=importer(modules)).name == "ryu"


def test_compat_names_every_failure():
    with pytest.raises(ImportError) as e:
        compat.load(import_module=importer({}))
    assert "os_ken: No module named" in str(e.value)
    assert "ryu: No module named" in str(e.value)


def test_compat_loads_the_installed_os_ken():
    ken = compat.load()
    assert ken.name == "os_ken" and ken.App.__name__ == "OSKenApp"
    assert ken.ofproto_v1_3.OFP_VERSION == 4


# ---- the property table ----

def test_props_read_every_line_of_the_def_file():
    lines = [ln for ln in props.DEF_FILE.read_text().splitlines()
             if ln.startswith("AWAFS_PROP(")]
    assert len(props.PROPS) == len(lines) > 60
    assert props.PROPS[2].key == "mode"
    assert props.PROPS[2].names == ("static", "adaptive")
    assert props.PROPS[4].kind == "PCT"
    assert props.PROPS[101].scope == "QUEUE"
    assert len({p.key for p in props.PROPS.values()
                if p.scope == "PORT"}) == sum(p.scope == "PORT"
                                              for p in props.PROPS.values())


def test_props_parse_text():
    got = props.parse('AWAFS_PROP(7, QUEUE, "x-y", ENUM, "a,b")\n'
                      '/* AWAFS_PROP(8, PORT, "no", U64, "") */\n')
    assert got == {7: props.Prop(7, "QUEUE", "x-y", "ENUM", ("a", "b"))}


@pytest.mark.parametrize("ptype, values, text", [
    (1, [2], "2"),                          # U64
    (3, [1000, 20000, 300000], "1000,20000,300000"),   # LIST
    (4, [10000, 12500, 33333], "10,12.5,33.333"),      # PCT, as %g
    (4, [100], "0.1"),
    (2, [1], "adaptive"),                   # ENUM
    (19, [2], "verify"),
])
def test_prop_rendering(ptype, values, text):
    assert props.PROPS[ptype].render(values) == text


# ---- NXST_AWAFS ----

def prop(ptype, *values):
    return struct.pack(f"!HH4x{len(values)}Q", ptype, 8 + 8 * len(values),
                       *values)


def entry(port_no, queue_id, *properties):
    body = b"".join(properties)
    return struct.pack("!H2xII4x", 16 + len(body), port_no, queue_id) + body


REPLY_BODY = (entry(2, 0xffffffff, prop(1, 2), prop(2, 1), prop(3, 10000),
                    prop(4, 10000), prop(999, 5, 6), prop(28, 9876))
              + entry(2, 0, prop(100, 0), prop(101, 81))
              + entry(2, 1, prop(100, 1), prop(101, 19)))


def test_nxst_request_body():
    assert nxst.request_body() == b"\xff\xff\xff\xff\0\0\0\0"
    assert nxst.request_body(2) == b"\0\0\0\x02\0\0\0\0"


def test_nxst_decodes_entries_and_skips_unknown_properties():
    entries = nxst.decode_entries(REPLY_BODY)
    assert entries == [
        nxst.Entry(2, None, {"queues": "2", "mode": "adaptive",
                             "thresholds": "10000", "percentiles": "10",
                             "current-thresholds": "9876"}),
        nxst.Entry(2, 0, {"priority": "0", "tx_packets": "81"}),
        nxst.Entry(2, 1, {"priority": "1", "tx_packets": "19"}),
    ]


def test_nxst_renders_dump_awafs_text():
    assert nxst.render_dump(nxst.decode_entries(REPLY_BODY)) == (
        " port 2: queues=2 mode=adaptive thresholds=10000 percentiles=10"
        " current-thresholds=9876\n"
        "  queue 0: priority=0 tx_packets=81\n"
        "  queue 1: priority=1 tx_packets=19\n")
    assert nxst.render_dump([]) == ""


def test_nxst_decodes_a_whole_message():
    body = struct.pack("!HH4xII", 0xffff, 0, 0x2320, 10) + REPLY_BODY
    msg = struct.pack("!BBHI", 4, 19, 8 + len(body), 7) + body
    assert nxst.decode_message(msg) == nxst.decode_entries(REPLY_BODY)
    with pytest.raises(nxst.DecodeError, match="not an OpenFlow 1.3"):
        nxst.decode_message(msg[:20] + b"\0\0\0\x0b" + msg[24:])
    with pytest.raises(nxst.DecodeError, match="header says"):
        nxst.decode_message(msg + b"\0" * 8)


@pytest.mark.parametrize("body, error", [
    (REPLY_BODY[:8], "less than an entry header"),
    (struct.pack("!H2xII4x", 12, 1, 0), "bad length 12"),
    (struct.pack("!H2xII4x", 32, 1, 0), "bad length 32"),
    (entry(1, 0, struct.pack("!HH4x", 101, 20) + b"\0" * 16),
     "property 101: bad length 20"),
    (entry(1, 0, struct.pack("!HH4x", 101, 24) + b"\0" * 8),
     "property 101: bad length 24"),
])
def test_nxst_refuses_bad_lengths(body, error):
    with pytest.raises(nxst.DecodeError, match=error):
        nxst.decode_entries(body)


def test_nxst_shared_vector_decodes_as_ovs_ofctl_prints_it():
    """ofproto-ext/tests/nxst-awafs-reply.hex, a reply from a real switch:
    the app's decoder and 'ovs-ofctl ofp-print' give the same text."""
    if not VECTOR.exists():
        pytest.skip(f"{VECTOR.relative_to(REPO)} not produced yet")
    hexdigits = "".join(VECTOR.read_text().split())
    printed = subprocess.run([str(BIN / "ovs-ofctl"), "ofp-print", hexdigits],
                             capture_output=True, text=True, check=True).stdout
    header, _, body = printed.partition("\n")
    assert header.startswith("NXST_AWAFS reply (OF1.3)"), printed
    entries = nxst.decode_message(bytes.fromhex(hexdigits))
    assert entries and nxst.render_dump(entries) == body


# ---- REST config: JSON to other_config, validation ----

def test_json_values_become_ovsdb_strings():
    assert config.to_other_config(
        {"queues": 3, "percentiles": [10, 12.5], "mode": "static",
         "thresholds": "1000,2000", "buffer": None}) == {
        "queues": "3", "percentiles": "10,12.5", "mode": "static",
        "thresholds": "1000,2000", "buffer": None}


@pytest.mark.parametrize("body, error", [
    ([1], "JSON object"),
    ({"queues": True}, "queues: True is not a string, a number"),
    ({"thresholds": []}, "thresholds: \\[\\] is not"),
    ({"thresholds": ["1"]}, "thresholds: \\['1'\\] is not"),
    ({"mode": {"a": 1}}, "mode: "),
])
def test_json_values_of_other_types_are_refused(body, error):
    with pytest.raises(config.ConfigError, match=error):
        config.to_other_config(body)


# (other_config, the switch's message); the same cases run against the real
# switch in test_controller.py.
BAD_CONFIGS = [
    ({"queues": "9"}, 'queues: "9" is not an integer between 2 and 8'),
    ({"queues": "x"}, 'queues: "x" is not an integer between 2 and 8'),
    ({"queues": "2.0"}, 'queues: "2.0" is not an integer between 2 and 8'),
    ({"speed": "1"}, 'unknown key "speed"'),
    ({"mode": "fast"}, 'mode: "fast" is neither "adaptive" nor "static"'),
    ({"window-type": "x"},
     'window-type: "x" is neither "histogram" nor "exact"'),
    ({"queues": "3", "thresholds": "1000"},
     "thresholds: 3 queues need 2 values, got 1"),
    ({"queues": "2", "percentiles": "10,20"},
     "percentiles: 2 queues need 1 values, got 2"),
    ({"queues": "2", "percentiles": "100"},
     'percentiles: "100" is not a percentile in (0, 100)'),
    ({"queues": "2", "percentiles": "0.0001"},
     'percentiles: "0.0001" is not a percentile in (0, 100)'),
    ({"queues": "2", "thresholds": "4294967296"},
     'thresholds: "4294967296" is not a byte count (0 to 4294967295)'),
    ({"queues": "3", "percentiles": "20,10"},
     "percentiles must be strictly increasing"),
    ({"queues": "3", "thresholds": "2000,1000"},
     "thresholds must be non-decreasing"),
    ({"queues": "3", "min-thresholds": "1000"},
     "min-thresholds: 3 queues need 2 values, got 1"),
    ({"queues": "2", "max-thresholds": "-1"},
     'max-thresholds: "-1" is not a byte count (0 to 4294967295)'),
    ({"queues": "3", "thresholds": "3000,6000",
      "min-thresholds": "2000,1000"},
     "min-thresholds and max-thresholds must be non-decreasing"),
    ({"queues": "2", "thresholds": "3000", "min-thresholds": "2000",
      "max-thresholds": "1000"},
     "min-thresholds must not be above max-thresholds"),
    ({"queues": "2", "thresholds": "3000", "min-thresholds": "5000"},
     "thresholds must lie within min-thresholds and max-thresholds"),
    ({"window-ms": "0"}, 'window-ms: "0" is not an integer between 1 and '
     '60000'),
    ({"window-capacity": "64", "min-samples": "65"},
     'min-samples: "65" is not an integer between 1 and 64'),
    ({"buffer": "100", "ecn-threshold": "101"},
     'ecn-threshold: "101" is not an integer between 0 and 100'),
    ({"queues": "2", "default-queue": "2"},
     'default-queue: "2" is not an integer between 0 and 1'),
    ({"trust": "nobody"},
     'trust: "nobody" is not "host", "switch" or "verify"'),
    ({"ecn-mode": "x"}, 'ecn-mode: "x" is neither "port" nor "queue"'),
    ({"max-rate": "400000000001"},
     'max-rate: "400000000001" is not an integer between 0 and '
     '400000000000'),
    ({"trust": "switch", "tardy": "on"},
     'tardy: "on" is not "off", "tfs" or "tfs+"'),
    ({"tardy": "tfs"},
     'tardy: "tfs" needs trust=switch or trust=verify (only the switch\'s '
     'flow table sees retransmissions)'),
    ({"trust": "switch", "tardy": "tfs+", "tardy-limit": "0"},
     'tardy-limit: "0" is not an integer between 1 and 4294967295'),
    ({"karuna": "yes"}, 'karuna: "yes" is neither "on" nor "off"'),
    ({"queues": "2", "karuna": "on"},
     "karuna: 2 queues cannot hold the queue reserved for deadline flows "
     "and two for the others (queues must be at least 3)"),
    ({"karuna": "on", "thresholds": "1000,2000,3000"},
     "thresholds: 3 queues need 2 values, got 3"),
    ({"size-thresholds": "1000,2000,3000"},
     "size-thresholds, size-percentiles: only with karuna=on"),
    ({"karuna": "on", "size-percentiles": "50,40"},
     "size-percentiles must be strictly increasing"),
    ({"karuna": "on", "default-queue": "0"},
     "default-queue: queue 0 is reserved for deadline flows with "
     "karuna=on"),
    ({"karuna": "on", "trust": "switch", "tardy": "tfs"},
     'tardy: "tfs" cannot go with karuna=on, which reserves queue 0 for '
     "deadline flows"),
    ({"aging": "on"}, "aging: needs karuna=on"),
    ({"karuna": "on", "aging": "on"},
     "aging: needs trust=switch or trust=verify (only the switch's flow "
     "table sees timeouts)"),
    ({"karuna": "on", "trust": "switch", "aging": "on",
      "aging-min-timeouts": "5", "aging-max-timeouts": "3"},
     "aging-min-timeouts: 5 is above aging-max-timeouts (3)"),
    ({"rto-min-us": "0"},
     'rto-min-us: "0" is not an integer between 1 and 60000000'),
    ({"tunnel": "on"}, 'tunnel: "on" is neither "auto" nor "off"'),
    ({"karuna": "on", "percentiles": "auto"},
     'percentiles: "auto" cannot go with karuna=on'),
    ({"objective": "slowdown"}, "objective: only with percentiles=auto"),
    ({"percentiles": "auto", "objective": "fastest"},
     'objective: "fastest" is not "fct", "slowdown", "short" or '
     '"pias"'),
    ({"percentiles": "auto", "short-size": "50000"},
     "short-size: only with objective=short"),
    ({"short-size": "50000"}, "short-size: only with objective=short"),
    ({"percentiles": "auto", "objective": "short", "short-size": "0"},
     'short-size: "0" is not an integer between 1 and 4294967295'),
    ({"window-weight": "source", "window-type": "exact"},
     "window-weight=source needs window-type=histogram"),
    ({"window-weight": "sender"},
     'window-weight: "sender" is neither "completion" nor "source"'),
    ({"karuna": "on", "size-percentiles": "auto"},
     'size-percentiles: "auto" is not a percentile in (0, 100)'),
    ({"max-rate": "7"},
     "max-rate: 7 bit/s is less than a byte a second (0: shaped to the "
     "link)"),
]

GOOD_CONFIGS = [
    {},
    {"queues": "2", "thresholds": "10000", "percentiles": "10"},
    {"queues": "3", "percentiles": "1e1,0x1.4p4"},     # 10, 20 (strtod)
    {"queues": "4", "percentiles": "10, 20.5 ,30", "thresholds":
     "1000,1000,5000", "mode": "static", "window-type": "exact"},
    {"queues": "8", "percentiles": "1,2,3,4,5,6,99.9", "trust": "verify",
     "ecn-mode": "queue", "buffer": "2048", "ecn-threshold": "2048",
     "default-queue": "7", "completion-rate-limit": "1000000"},
    {"trust": "switch", "tardy": "tfs+", "tardy-limit": "5000"},
    {"queues": "3", "thresholds": "3000,30000",
     "min-thresholds": "2000,20000", "max-thresholds": "5000,1000000"},
    # Static mode moves nothing: the bounds do not apply.
    {"queues": "2", "mode": "static", "thresholds": "100",
     "min-thresholds": "5000"},
    {"queues": "4", "karuna": "on", "thresholds": "1000,2000",
     "size-thresholds": "5000,50000", "size-percentiles": "30,60",
     "trust": "switch", "aging": "on", "aging-min-timeouts": "3",
     "rto-min-us": "50000"},
    {"tunnel": "off", "trust": "switch"},
    {"queues": "8", "percentiles": "auto", "thresholds": "1,2,3,4,5,6,7"},
    {"percentiles": "auto", "objective": "slowdown"},
    {"percentiles": "auto", "objective": "short", "short-size": "50000"},
]


# ---- the table of QoS keys (netdev-ext/netdev-dpdk-awafs-keys.def) ----

def test_readme_key_table_is_the_table():
    """vswitchd-conf/README.md's table is written from the table the switch
    compiles (regenerate it with build/venv/bin/python -m
    awafs_controller.keys)."""
    readme = (REPO / "vswitchd-conf" / "README.md").read_text()
    start = readme.index("| key | values | default | meaning |")
    end = readme.index("\n\n", start)
    assert readme[start:end + 1] == keys.markdown_table()


def vswitch_xml_columns():
    """{key: type JSON} of the awafs columns the series adds to
    vswitch.xml."""
    patch = (REPO / "ovs-patches"
             / "Documentation-Describe-the-awafs-QoS-type.patch").read_text()
    diff = patch.split("diff --git a/vswitchd/vswitch.xml", 1)[1]
    xml = "\n".join(line[1:] for line in diff.split("\ndiff --git")[0]
                    .splitlines() if line.startswith("+")
                    and not line.startswith("+++"))
    return {m.group(1): json.loads(m.group(2)) for m in re.finditer(
        r'<column name="other_config" key="([^"]+)"\s+type=\'([^\']*)\'',
        xml)}


def test_vswitch_xml_documents_each_key_as_the_table_has_it():
    columns = vswitch_xml_columns()
    # max-rate is the column QoS types share (linux-htb's, in stock OVS).
    assert set(columns) == {k.name for k in keys.KEYS} - {"max-rate"}
    for key in keys.KEYS:
        if key.name == "max-rate":
            continue
        col = columns[key.name]
        if key.type == "UINT":
            assert (col["type"], col["minInteger"], col["maxInteger"]) == (
                "integer", key.min, key.max), key
        elif key.type == "ENUM":
            assert col["type"] == "string", key
            assert set(col["enum"][1]) == set(key.choices), key
        else:
            assert col == {"type": "string"}, key


def test_table_ranges_are_the_cores():
    """The table's bounds that the core's arrays and fields set
    (lib/awafs.h)."""
    core = core_constants()
    by = keys.BY_NAME
    assert (by["queues"].min, by["queues"].max) == (
        core["AWAFS_MIN_QUEUES"], core["AWAFS_MAX_QUEUES"])
    assert by["default-queue"].max == core["AWAFS_MAX_QUEUES"] - 1
    for name in ("aging-min-timeouts", "aging-max-timeouts"):
        assert by[name].max == core["AWAFS_FLOWTAB_MAX_KAPPA"]
    for name in ("thresholds", "size-thresholds", "tardy-limit"):
        assert by[name].max == core["AWAFS_FLOW_SIZE_MAX"]


def test_table_defaults_are_valid_values():
    for key in keys.KEYS:
        if key.type == "ENUM":
            assert key.default in key.choices, key
        elif key.type == "UINT" and key.default_value() is not None:
            assert key.min <= key.default_value() <= key.max, key


@pytest.mark.parametrize("cfg, error", BAD_CONFIGS)
def test_validation_refuses_with_the_switch_message(cfg, error):
    with pytest.raises(config.ConfigError) as e:
        config.validate(cfg)
    assert str(e.value) == error


@pytest.mark.parametrize("cfg", GOOD_CONFIGS)
def test_validation_accepts(cfg):
    config.validate(cfg)


# ---- the OpenAPI file ----

def test_openapi_file_is_valid_openapi_3():
    from openapi_spec_validator import validate

    spec = yaml.safe_load((REPO / "ryu-app" / "openapi.yaml").read_text())
    assert spec["openapi"].startswith("3.")
    validate(spec)


# ---- /metrics and the example Grafana dashboard ----

def observed_switch():
    """Observations of one switch with every exported key."""
    from awafs_controller import metrics, state

    obs = state.Observations()
    sw = obs.switch("0000000000000001")
    sw.connected = True
    sw.port_names = {2: "p1"}
    sw.update_queue_stats(1.0, [(2, 0, 10, 1000, 0), (2, 1, 5, 500, 0)])
    sw.update_queue_stats(2.0, [(2, 0, 30, 4000, 0), (2, 1, 5, 500, 0)])
    port = {k: "7" for k in metrics.PORT_KEYS}
    queue = {k: "3" for k in metrics.QUEUE_KEYS}
    sw.update_awafs(2.0, [nxst.Entry(2, None, {**port,
                                               "current-thresholds":
                                               "1000,9000"}),
                          nxst.Entry(2, 0, queue), nxst.Entry(2, 1, queue)])
    return obs, sw


def test_metrics_and_rates():
    from awafs_controller import metrics

    obs, sw = observed_switch()
    assert sw.queue_stats[(2, 0)].tx_bytes_per_s == 3000
    assert sw.queue_stats[(2, 0)].tx_packets_per_s == 20
    text = metrics.render(obs).decode()
    assert 'awafs_threshold_bytes{index="1",port="p1",switch=' \
        '"0000000000000001"} 9000.0' in text
    assert 'awafs_queue_tx_bytes_total{port="p1",queue="0",switch=' \
        '"0000000000000001"} 4000.0' in text
    assert 'awafs_completions_total{port="p1",switch="0000000000000001"} ' \
        '7.0' in text
    assert [(h.version, h.thresholds) for h in sw.history[2]] == \
        [(7, [1000, 9000])]


def test_rates_per_poll():
    """Each NXST_AWAFS reply after the first records its counters' rates
    since the one before; a counter that went back (a new QoS) has none."""
    from awafs_controller import state

    sw = state.Observations().switch("0000000000000001")

    def reply(now, completions, tx_bytes, dropped):
        queue = {"tx_bytes": str(tx_bytes), "dropped-packets": str(dropped),
                 "dropped-bytes": str(dropped * 1000),
                 "backlog-bytes": "5000", "backlog-packets": "5"}
        sw.update_awafs(now, [nxst.Entry(2, None, {"completions":
                                                   str(completions)}),
                              nxst.Entry(2, 0, queue)])
    reply(10.0, 100, 1000, 0)
    assert 2 not in sw.rates
    reply(10.5, 150, 6000, 3)
    reply(11.5, 10, 1000, 3)
    [first, second] = sw.rates[2]
    assert (first.time, first.completions_per_s) == (10.5, 100)
    assert first.queues == {0: {"tx_bytes_per_s": 10000,
                                "dropped_packets_per_s": 6,
                                "dropped_bytes_per_s": 6000,
                                "backlog_bytes": 5000,
                                "backlog_packets": 5}}
    assert second.completions_per_s is None
    assert second.queues[0]["tx_bytes_per_s"] is None
    assert second.queues[0]["dropped_packets_per_s"] == 0


def test_grafana_dashboard_queries_exported_metrics():
    import json
    import re

    from awafs_controller import metrics
    from prometheus_client.parser import text_string_to_metric_families

    exported = {s.name for f in text_string_to_metric_families(
        metrics.render(observed_switch()[0]).decode()) for s in f.samples}
    dashboard = json.loads((REPO / "ryu-app" /
                            "grafana-dashboard.json").read_text())
    queried = set(re.findall(r"awafs_\w+", json.dumps(dashboard)))
    assert queried and queried <= exported, queried - exported


# ---- the launcher's options ----

def test_launcher_options():
    from awafs_controller.__main__ import parse_args

    args = parse_args(["--ofp-port", "6653", "--rest", "127.0.0.1:8080",
                       "--ovsdb", "1=unix:/run/db.sock",
                       "--ovsdb", "0x00000000000000aB=tcp:10.0.0.1:6640"])
    assert (args.ofp_port, args.rest) == (6653, ("127.0.0.1", 8080))
    assert args.ovsdb == [("0000000000000001", "unix:/run/db.sock"),
                          ("00000000000000ab", "tcp:10.0.0.1:6640")]
    assert parse_args(["--rest", ":8081"]).rest == ("0.0.0.0", 8081)
    for bad in (["--ovsdb", "br0=unix:/x"], ["--ovsdb", "1"],
                ["--ovsdb", "1="], ["--ovsdb", "1" * 17 + "=unix:/x"]):
        with pytest.raises(SystemExit):
            parse_args(bad)

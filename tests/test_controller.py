"""The controller app (ryu-app/) against the patched switch: a real
ovs-vswitchd with two bridges (two OpenFlow switches) in one sandbox and the
real controller process from build/bin/awafs-controller, over loopback.
Every REST response is validated against ryu-app/openapi.yaml."""

import re

import pytest
import yaml
from openapi_schema_validator import OAS30Validator
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import BUILD, REPO
from tests.test_controller_unit import BAD_CONFIGS, GOOD_CONFIGS
import testbed.controller
from testbed.controller import free_port
from testbed.ovs_sandbox import REJECTED_QOS
from testbed.switch import Switch, completion_frames, wait_until
from testbed.traffic import tcp_frame
from testbed.workload import weyl_samples


SPEC = yaml.safe_load((REPO / "ryu-app" / "openapi.yaml").read_text())
ARTEFACTS = BUILD / "test-artefacts"
POLL_PERIOD = 1.0           # awafs_controller.app.POLL_PERIOD
# How long a test waits for what the next poll brings: a few periods on a
# quiet machine; more is a slow machine, which makes a test slower, not
# red.
SETTLE = 10 * POLL_PERIOD
D0, D1 = "0000000000000001", "0000000000000002"
BRIDGES = {"br0": D0, "br1": D1}
MICRO = [(10000, 0.0), (10000, 0.8), (1000000, 0.8), (1000000, 1.0)]


def check_against_openapi(method, path, status, ctype, body):
    """Fails unless 'body' is what openapi.yaml says 'method path' answers
    with 'status'."""
    for template, ops in SPEC["paths"].items():
        if re.fullmatch(re.sub(r"\{\w+\}", "[^/]+", template), path):
            break
    else:
        pytest.fail(f"{path} is not in openapi.yaml")
    responses = ops[method.lower()]["responses"]
    assert str(status) in responses, (method, path, status, body)
    response = responses[str(status)]
    if "$ref" in response:
        response = SPEC["components"]["responses"][
            response["$ref"].rsplit("/", 1)[1]]
    assert ctype in response["content"], (path, ctype)
    schema = response["content"][ctype]["schema"]
    OAS30Validator({**schema, "components": SPEC["components"]}).validate(
        body)


class Controller(testbed.controller.Controller):
    """The controller process, every REST response checked against
    openapi.yaml."""

    def __init__(self, ofp_port, ovsdb, hub):
        super().__init__(ofp_port, ovsdb, ARTEFACTS / f"controller-{hub}.log",
                         hub)

    def request(self, method, path, body=None, raw=None):
        status, ctype, decoded = self.call(method, path, body, raw)
        check_against_openapi(method, path, status, ctype, decoded)
        return status, decoded

    def configure(self, dpid, port, cfg, method="PUT"):
        status, body = self.request(method,
                                 f"/switches/{dpid}/ports/{port}/config", cfg)
        assert status == 200, body
        return body

    def metrics(self):
        status, text = self.request("GET", "/metrics")
        assert status == 200
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for f in text_string_to_metric_families(text)
                for s in f.samples}


@pytest.fixture(scope="module")
def net():
    """br0 (p0 -> p1 on veths, testbed/switch.py) and br1 (q1 on net_null),
    datapath IDs D0 and D1, both with the controller's address."""
    sw = Switch()
    try:
        sb = sw.sb
        sb.add_bridge("br1")
        sb.add_dpdk_port("br1", "q1", "net_null9,no-rx=1", 1)
        sw.ofp_port = free_port()
        for bridge, dpid in BRIDGES.items():
            # Secure: the flows stay while the controller is away.
            sb.vsctl("set", "bridge", bridge,
                     f"other-config:datapath-id={dpid}", "fail_mode=secure",
                     "other-config:disable-in-band=true",
                     "protocols=OpenFlow10,OpenFlow13")
            sb.vsctl("set-controller", bridge,
                     f"tcp:127.0.0.1:{sw.ofp_port}")
        forward_p0_to_p1(sw)
        yield sw
    finally:
        sw.close()


# Every test on each hub os-ken has: its native threads (pip's os-ken), and
# eventlet, the only one of Debian 12's os-ken 2.5 (packages/).
@pytest.fixture(scope="module", params=["native", "eventlet"])
def ctl(net, request):
    c = Controller(net.ofp_port, {dpid: net.sb.db_sock
                                  for dpid in BRIDGES.values()},
                   request.param)
    c.start()
    yield c
    c.stop()


def forward_p0_to_p1(sw):
    """The test switch's rule, again: a new datapath ID or a restart leaves
    br0 without it."""
    sw.sb.ofctl("add-flow", "br0", "in_port=1,tcp,actions=output:2")


def ovsdb_config(sb, port):
    return sb.vsctl("--if-exists", "get", "qos", sb.qos_uuid(port),
                    "other_config").strip()


def nxst_status(ctl, dpid, port):
    """The port's NXST_AWAFS status once polled."""
    def polled():
        body = ctl.port(dpid, port)
        return body if body["status"] or body["nxst_error"] else None
    assert wait_until(polled, SETTLE), "no NXST_AWAFS answer"
    body = polled()
    assert not body["nxst_error"], body["nxst_error"]
    return body


# ---- configuration ---------------------------------------------------------

def test_two_switches_configured_over_rest(ctl, net):
    configs = {(D0, "p1"): {"queues": 3, "thresholds": [5000, 50000],
                            "percentiles": [20, 40]},
               (D1, "q1"): {"queues": 2, "mode": "static",
                            "thresholds": "7000"}}
    for (dpid, port), cfg in configs.items():
        body = ctl.configure(dpid, port, cfg)
        assert body["config"] == {k: ",".join(map(str, v)) if
                                  isinstance(v, list) else str(v)
                                  for k, v in cfg.items()}
        # In the switch (by the controller's OVSDB transaction).
        assert wait_until(lambda: net.sb.qos_show(port)[1].get("queues")
                          == str(cfg["queues"]), SETTLE)
    _, details, queues = net.sb.qos_show("p1")
    assert details["thresholds"] == "5000,50000"
    assert details["percentiles"] == "20,40" and len(queues) == 3
    _, details, queues = net.sb.qos_show("q1")
    assert details["mode"] == "static" and details["thresholds"] == "7000"

    _, listing = ctl.request("GET", "/switches")
    assert {s["dpid"]: (s["bridge"], s["connected"],
                        [p["port"] for p in s["awafs_ports"]])
            for s in listing["switches"]} == {
        D0: ("br0", True, ["p1"]), D1: ("br1", True, ["q1"])}
    # OpenFlow queue statistics for every queue, within a polling period.
    assert wait_until(lambda: [q["queue_id"] for q in ctl.port(D0, "p1")
                               ["queues"]] == [0, 1, 2], SETTLE)
    assert wait_until(lambda: [q["queue_id"] for q in ctl.port(D1, "q1")
                               ["queues"]] == [0, 1], SETTLE)


def test_patch_changes_some_keys_and_null_removes_one(ctl, net):
    ctl.configure(D0, "p1", {"queues": 2, "percentiles": 10,
                             "window-ms": 500})
    body = ctl.configure(D0, "p1", {"percentiles": [12.5],
                                    "window-ms": None}, method="PATCH")
    assert body["config"] == {"queues": "2", "percentiles": "12.5"}
    assert wait_until(lambda: net.sb.qos_show("p1")[1]["percentiles"]
                      == "12.5", SETTLE)
    assert net.sb.qos_show("p1")[1]["window-ms"] == "250"     # Default.


def test_bad_input_is_refused_and_changes_nothing(ctl, net):
    sb = net.sb
    ctl.configure(D0, "p1", {"queues": 3, "thresholds": "5000,50000",
                             "percentiles": "20,40"})
    assert wait_until(lambda: sb.qos_show("p1")[1].get("queues") == "3",
                      SETTLE)
    before = (ovsdb_config(sb, "p1"), sb.qos_show("p1")[1]["thresholds"])
    path = f"/switches/{D0}/ports/p1/config"

    # PUT: the whole configuration; PATCH: merged with the one above.
    cases = [("PUT", cfg, message) for cfg, message in BAD_CONFIGS]
    cases += [
        ("PATCH", {"queues": 4}, "thresholds: 4 queues need 3 values, got 2"),
        ("PATCH", {"percentiles": [40, 20]},
         "percentiles must be strictly increasing"),
        ("PUT", {"queues": True},
         "queues: True is not a string, a number or a list of numbers"),
        ("PATCH", {"thresholds": [1, "2"]},
         "thresholds: [1, '2'] is not a string, a number or a list of "
         "numbers"),
        ("PUT", [3], "the body must be a JSON object of keys"),
    ]
    for method, cfg, message in cases:
        status, body = ctl.request(method, path, cfg)
        assert (status, body["error"]) == (400, message), (method, cfg)
    status, body = ctl.request("PUT", path, raw=b"{not json")
    assert status == 400 and "Expecting property name" in body["error"]

    status, body = ctl.request("PUT", f"/switches/{D0}/ports/nope/config",
                            {"queues": 2})
    assert status == 404 and "no port nope" in body["error"]
    status, body = ctl.request("GET", "/switches/00000000000000ff/ports/p1")
    assert status == 404 and "unknown switch" in body["error"]
    status, body = ctl.request("GET", "/switches/xyz/ports/p1/history")
    assert status == 404 and "not a datapath ID" in body["error"]

    assert (ovsdb_config(sb, "p1"),
            sb.qos_show("p1")[1]["thresholds"]) == before
    assert "error" not in sb.qos_show("p1")[1]


def test_rest_refuses_exactly_what_the_switch_refuses(ctl, net):
    """Each configuration the app refuses, written to OVSDB past the
    controller, gets the same message from the switch (qos/show's error);
    each it accepts, the switch applies."""
    sb = net.sb
    sb.allow_log(REJECTED_QOS)
    for cfg, message in BAD_CONFIGS:
        sb.set_awafs("q1", **cfg)
        assert wait_until(lambda: sb.qos_show("q1")[1].get("error")
                          == message, 2), (cfg, sb.qos_show("q1"))
    for cfg in GOOD_CONFIGS:
        sb.set_awafs("q1", **cfg)
        assert wait_until(lambda: sb.qos_show("q1")[1].get("queues")
                          == cfg.get("queues", "4"), 2), cfg
        assert "error" not in sb.qos_show("q1")[1], cfg
    ctl.configure(D1, "q1", {"queues": 2})
    assert wait_until(lambda: "error" not in sb.qos_show("q1")[1], 2)


# ---- observation -----------------------------------------------------------

def test_rest_qos_show_and_dump_awafs_agree(ctl, net):
    for dpid, bridge, port in ((D0, "br0", "p1"), (D1, "br1", "q1")):
        ctl.configure(dpid, port, {"queues": 3, "mode": "static",
                                   "thresholds": "3000,30000",
                                   "percentiles": "25,50"})
        assert wait_until(lambda: (nxst_status(ctl, dpid, port)["status"]
                                   .get("thresholds") == "3000,30000"),
                          SETTLE)
        rest = nxst_status(ctl, dpid, port)
        _, qos_show, _ = net.sb.qos_show(port)
        [(dumped, dumped_queues)] = net.sb.dump_awafs(bridge,
                                                      port).values()
        # The configuration and everything that does not move without
        # traffic in static mode.
        keys = ["queues", "mode", "thresholds", "percentiles", "window-ms",
                "interval-ms", "min-samples", "window-type", "buffer",
                "trust", "current-thresholds", "thresholds-version",
                "completions", "window-samples", "backlog-packets"]
        for key in keys:
            assert rest["status"][key] == qos_show[key] == dumped[key], key
        assert set(rest["status"]) == set(dumped)
        assert {q["queue_id"]: q["status"]["priority"]
                for q in rest["queues"]} == {
            q: kv["priority"] for q, kv in dumped_queues.items()} == {
            0: "0", 1: "1", 2: "2"}


def test_thresholds_adapt_and_history_and_metrics_show_it(ctl, net):
    ctl.configure(D0, "p1", {"queues": 2, "thresholds": 1000000,
                             "percentiles": 10, "window-ms": 250,
                             "interval-ms": 200})
    assert wait_until(lambda: nxst_status(ctl, D0, "p1")["status"]
                      .get("current-thresholds") == "1000000",
                      SETTLE)
    net.play(completion_frames(weyl_samples(MICRO, 1500)), rate=1000)

    def history():
        status, body = ctl.request("GET", f"/switches/{D0}/ports/p1/history")
        assert status == 200
        return body["history"]
    assert wait_until(lambda: abs(history()[-1]["thresholds"][0] - 10000)
                      <= 1000, SETTLE), history()
    # Since the configuration: its initial threshold, then each version.
    rows = history()
    start = max(i for i, r in enumerate(rows)
                if r["thresholds"] == [1000000])
    versions = [r["version"] for r in rows[start:]]
    assert versions[0] == 0 and versions == sorted(set(versions))

    labels = (("port", "p1"), ("switch", D0))
    threshold = tuple(sorted(labels + (("index", "0"),)))
    assert wait_until(lambda: int(net.sb.qos_show("p1")[1]["completions"])
                      == 1500, SETTLE)
    completions = 1500
    assert wait_until(lambda: ctl.metrics()[("awafs_completions_total",
                                             labels)] == completions,
                      SETTLE)
    metrics = ctl.metrics()
    assert abs(metrics[("awafs_threshold_bytes", threshold)] - 10000) <= 1000
    assert metrics[("awafs_thresholds_version", labels)] >= versions[-1] > 0


def test_metrics_show_queue_counters(ctl, net):
    ctl.configure(D0, "p1", {"queues": 3, "mode": "static",
                             "thresholds": "1000,5000"})
    assert wait_until(lambda: net.sb.qos_show("p1")[1].get("thresholds")
                      == "1000,5000", SETTLE)
    frames = [tcp_frame(bytes_sent=b, seq=i)
              for i, b in enumerate([0, 0, 2000, 2000, 2000, 9000])]
    net.send_and_capture(frames)

    def queue_packets():
        m = ctl.metrics()
        return {q: m.get(("awafs_queue_tx_packets_total",
                          (("port", "p1"), ("queue", str(q)),
                           ("switch", D0))))
                for q in range(3)}
    assert wait_until(lambda: queue_packets() == {0: 2, 1: 3, 2: 1},
                      SETTLE), queue_packets()
    m = ctl.metrics()
    assert m[("awafs_switch_connected", (("switch", D0),))] == 1
    assert m[("awafs_switch_connected", (("switch", D1),))] == 1
    assert [q["tx_packets"] for q in ctl.port(D0, "p1")["queues"]] == \
        [2, 3, 1]


# ---- the dashboard, in a real browser -------------------------------------

def browser(height=1200):
    """Debian's Chromium, headless, through its chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", f"--window-size=1000,{height}"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"),
                            options=options)


def test_dashboard_shows_a_config_change(ctl, net):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    ctl.configure(D0, "p1", {"queues": 2, "percentiles": 10})
    ctl.configure(D1, "q1", {"queues": 2})
    driver = browser()
    try:
        driver.get(f"http://{ctl.rest}/")

        def config_text(dpid, port):
            found = driver.find_elements(
                By.CSS_SELECTOR, f'section[data-switch="{dpid}"]'
                f'[data-port="{port}"] .config')
            return found[0].text if found else None
        wait = WebDriverWait(driver, SETTLE)
        wait.until(lambda d: config_text(D0, "p1") ==
                   "percentiles=10 queues=2")
        assert config_text(D1, "q1") == "queues=2"

        ctl.configure(D0, "p1", {"percentiles": 25, "interval-ms": 100},
                      method="PATCH")
        wait.until(lambda d: config_text(D0, "p1") ==
                   "interval-ms=100 percentiles=25 queues=2")
        section = driver.find_element(
            By.CSS_SELECTOR, f'section[data-switch="{D0}"][data-port="p1"]')
        assert "connected" in section.find_element(By.TAG_NAME, "h2").text
        assert len(section.find_elements(By.CSS_SELECTOR, "tr.queue")) == 2
        assert section.find_elements(
            By.CSS_SELECTOR, 'figure[data-chart="thresholds"] svg')
        shot = ARTEFACTS / "dashboard.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 1000
    finally:
        driver.quit()


# ---- restarts ---------------------------------------------------------------

def test_controller_restart_rereads_state(ctl, net):
    ctl.configure(D0, "p1", {"queues": 3, "thresholds": "4000,40000",
                             "percentiles": "10,30"})
    assert wait_until(lambda: len(ctl.port(D0, "p1")["queues"]) == 3,
                      SETTLE)
    before = ctl.port(D0, "p1")
    ctl.stop()
    assert not ctl.answers()
    ctl.start()
    after = ctl.port(D0, "p1")
    assert after["config"] == before["config"]
    assert wait_until(lambda: [q["queue_id"] for q in ctl.port(D0, "p1")
                               ["queues"]] == [0, 1, 2], SETTLE)
    status = nxst_status(ctl, D0, "p1")["status"]
    assert status["thresholds"] == "4000,40000"


def test_switch_restart_reconnects(ctl, net):
    sb = net.sb
    sb.stop_vswitchd()
    assert wait_until(lambda: ctl.connected() == set(), SETTLE)
    sb.start_vswitchd()
    assert wait_until(lambda: ctl.connected() == {D0, D1}, 20)
    forward_p0_to_p1(net)
    assert wait_until(lambda: ctl.port(D0, "p1")["queues"], SETTLE)

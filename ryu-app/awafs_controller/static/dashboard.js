// The AWAFS dashboard: polls the REST API (openapi.yaml) every second and
// redraws one section per switch and AWAFS port.
"use strict";

const PERIOD_MS = 1000;
const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                 "#8c564b", "#e377c2"];
const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
  children.forEach(c => e.append(c));
  return e;
}

async function getJson(path) {
  const r = await fetch(path);
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.json();
}

function keyValues(obj) {
  return Object.keys(obj).sort().map(k => `${k}=${obj[k]}`).join(" ");
}

// Thresholds over time: one line per threshold index, time on x.
function chart(history) {
  const w = 480, h = 140, svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", w);
  svg.setAttribute("height", h);
  svg.setAttribute("class", "history");
  if (history.length === 0) return svg;
  const t0 = history[0].time, t1 = Math.max(history.at(-1).time, t0 + 1);
  const now = Date.now() / 1000;
  const tEnd = Math.max(t1, now);
  const ymax = Math.max(1, ...history.flatMap(s => s.thresholds));
  const x = t => 40 + (w - 50) * (t - t0) / (tEnd - t0);
  const y = v => h - 15 - (h - 25) * v / ymax;
  history[0].thresholds.forEach((_, i) => {
    // Steps: a threshold holds until the next sample.
    const pts = [];
    history.forEach((s, j) => {
      const next = j + 1 < history.length ? history[j + 1].time : tEnd;
      pts.push(`${x(s.time)},${y(s.thresholds[i])}`,
               `${x(next)},${y(s.thresholds[i])}`);
    });
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("points", pts.join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", COLOURS[i % COLOURS.length]);
    svg.append(line);
  });
  const label = document.createElementNS(SVG, "text");
  label.setAttribute("x", 2);
  label.setAttribute("y", 12);
  label.setAttribute("font-size", 10);
  label.textContent = `${ymax} B`;
  svg.append(label);
  return svg;
}

function queueTable(queues) {
  const head = el("tr", {}, ...["queue", "tx packets", "packets/s", "bytes/s",
                                "backlog", "dropped"].map(t => el("th", {}, t)));
  const rows = queues.map(q => el("tr", {"class": "queue"},
    ...[q.queue_id, q.tx_packets ?? "", Math.round(q.tx_packets_per_s ?? 0),
        Math.round(q.tx_bytes_per_s ?? 0),
        q.status ? q.status["backlog-packets"] : "",
        q.status ? q.status["dropped-packets"] : ""]
      .map(v => el("td", {}, String(v)))));
  return el("table", {}, head, ...rows);
}

async function portSection(sw, port) {
  const base = `switches/${sw.dpid}/ports/${encodeURIComponent(port.port)}`;
  const [state, hist] = await Promise.all([getJson(base),
                                           getJson(`${base}/history`)]);
  const status = state.status || {};
  return el("section", {"class": "port", "data-switch": sw.dpid,
                        "data-port": port.port},
    el("h2", {}, `${sw.dpid} (${sw.bridge ?? "?"}) port ${port.port} `,
       el("span", {"class": sw.connected ? "up" : "down"},
          sw.connected ? "connected" : "disconnected")),
    el("p", {}, "config: ",
       el("span", {"class": "config"}, keyValues(state.config || {}))),
    el("p", {}, "current thresholds: ",
       el("span", {"class": "thresholds"},
          status["current-thresholds"] ?? state.nxst_error ?? "not polled yet"),
       ` (version ${status["thresholds-version"] ?? "-"}, completions `
       + `${status["completions"] ?? "-"})`),
    chart(hist.history),
    queueTable(state.queues));
}

async function refresh() {
  try {
    const {switches} = await getJson("switches");
    const sections = [];
    for (const sw of switches)
      for (const port of sw.awafs_ports)
        sections.push(await portSection(sw, port));
    document.getElementById("switches").replaceChildren(...sections);
    document.getElementById("updated").textContent =
      `Updated ${new Date().toLocaleTimeString()}.`;
  } catch (e) {
    document.getElementById("updated").textContent = `Error: ${e.message}`;
  }
  setTimeout(refresh, PERIOD_MS);
}

refresh();

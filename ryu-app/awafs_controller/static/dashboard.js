// The AWAFS dashboard: polls the REST API (openapi.yaml) every second and
// redraws one section per switch and AWAFS port: its thresholds over time,
// its queues' bytes and drops over time, its completions per second, the
// window's flow sizes and a table of counters.  Plain SVG, nothing fetched
// from elsewhere.
"use strict";

const PERIOD_MS = 1000;
const SPAN_S = 120;             // The time charts' span, seconds.
const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                 "#8c564b", "#e377c2", "#7f7f7f"];
const SVG = "http://www.w3.org/2000/svg";
const W = 420, H = 200;
const M = {left: 70, right: 28, top: 10, bottom: 38};    // Plot margins.

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
  children.forEach(c => e.append(c));
  return e;
}

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, v));
  if (text !== undefined) e.textContent = text;
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

// ---- units ----

// Bytes in IEC units: "512 B", "1.5 KiB", "20 MiB".
function bytes(v) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const digits = i === 0 || Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${Number(v.toFixed(digits))} ${units[i]}`;
}

function count(v) {
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en")
                             : String(Number(v.toFixed(Math.abs(v) < 10 ? 1 : 0)));
}

function clock(t) {
  return new Date(t * 1000).toLocaleTimeString("en-GB");
}

// ---- axes ----

// Up to 5 ticks from 0 to at least 'max', 1, 2 or 5 times a power of 10
// (of 1024 for bytes) apart.
function linearTicks(max, base) {
  const step0 = max / 4;
  const unit = Math.pow(base, Math.floor(Math.log(step0) / Math.log(base)));
  const step = [1, 2, 5, 10, 20, 50, 100, 200, 500].map(m => m * unit)
    .find(s => s >= step0) || unit * base;
  const ticks = [0];
  while (ticks.at(-1) < max) ticks.push(ticks.length * step);
  return ticks;
}

// Ticks from a power of 2 at or below 'min' to one at or above 'max', at
// most 6, a power of 2 apart.
function log2Ticks(min, max) {
  const lo = Math.floor(Math.log2(Math.max(1, min)));
  const hi = Math.max(Math.ceil(Math.log2(Math.max(2, max))), lo + 1);
  const step = Math.ceil((hi - lo) / 5);
  const ticks = [];
  for (let e = lo; e < hi + step; e += step) ticks.push(2 ** e);
  return ticks;
}

// A plot area mapping x in [x0, x1] and y in [y0, y1] ('log': y on a
// logarithmic scale) into the SVG's pixels.
function scales(x0, x1, y0, y1, log) {
  const f = log ? Math.log10 : v => v;
  return {
    x: v => M.left + (W - M.left - M.right) * (v - x0) / (x1 - x0 || 1),
    y: v => H - M.bottom - (H - M.top - M.bottom)
            * (f(Math.max(v, log ? y0 : -Infinity)) - f(y0))
            / (f(y1) - f(y0) || 1),
  };
}

// The axes of 'svg' with their ticks ([value, label]) and titles.
function drawAxes(svg, s, xTicks, yTicks, xTitle, yTitle) {
  const bottom = H - M.bottom, right = W - M.right;
  const gx = svgEl("g", {"class": "axis x"});
  const gy = svgEl("g", {"class": "axis y"});
  gx.append(svgEl("line", {x1: M.left, x2: right, y1: bottom, y2: bottom,
                           stroke: "#666"}));
  gy.append(svgEl("line", {x1: M.left, x2: M.left, y1: M.top, y2: bottom,
                           stroke: "#666"}));
  for (const [v, label] of xTicks) {
    const x = s.x(v);
    gx.append(svgEl("line", {x1: x, x2: x, y1: bottom, y2: bottom + 4,
                             stroke: "#666"}));
    gx.append(svgEl("text", {"class": "tick", x, y: bottom + 15,
                             "text-anchor": "middle"}, label));
  }
  for (const [v, label] of yTicks) {
    const y = s.y(v);
    gy.append(svgEl("line", {x1: M.left, x2: right, y1: y, y2: y,
                             stroke: "#e4e4e4"}));
    gy.append(svgEl("text", {"class": "tick", x: M.left - 5, y: y + 3,
                             "text-anchor": "end"}, label));
  }
  gx.append(svgEl("text", {"class": "axis-title", x: (M.left + right) / 2,
                           y: H - 4, "text-anchor": "middle"}, xTitle));
  const cy = (M.top + bottom) / 2;
  gy.append(svgEl("text", {"class": "axis-title", x: 11, y: cy,
                           "text-anchor": "middle",
                           transform: `rotate(-90 11 ${cy})`}, yTitle));
  svg.prepend(gx, gy);
}

function timeTicks(t0, t1) {
  const step = [10, 15, 30, 60, 120, 300, 600].find(s => (t1 - t0) / s <= 5)
               || 600;
  const ticks = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step)
    ticks.push([t, clock(t)]);
  return ticks;
}

// ---- charts ----

// A figure: the chart's title, its SVG and a legend of the latest values.
function figure(name, title, svg, legend) {
  return el("figure", {"class": "chart", "data-chart": name},
    el("figcaption", {}, title), svg,
    el("div", {"class": "legend"}, ...legend.map(([colour, text]) =>
      el("span", {"class": "key", style: `color: ${colour}`}, `■ `,
         el("span", {"class": "value"}, text)))));
}

function plot(name) {
  return svgEl("svg", {width: W, height: H, "class": `plot ${name}`});
}

function emptySvg(name, message) {
  const svg = plot(name);
  svg.append(svgEl("text", {x: W / 2, y: H / 2, "text-anchor": "middle",
                            "class": "empty"}, message));
  return svg;
}

// Lines over the last SPAN_S seconds up to 'tEnd'.  'series': [{label,
// points: [[t, v], ...]}]; 'unit': {fmt, base, title}; 'step': each value
// holds until the next; 'log': y logarithmic.
function timeChart(name, title, series, tEnd, unit, {step, log} = {}) {
  const t0 = tEnd - SPAN_S;
  const shown = series.map(s => {
    // From the last point at or before t0, clipped to t0.
    const first = s.points.findLastIndex(([t]) => t <= t0);
    return {...s, points: s.points.slice(Math.max(first, 0))
                            .filter(([, v]) => v !== null)
                            .map(([t, v]) => [Math.max(t, t0), v])};
  });
  const values = shown.flatMap(s => s.points.map(([, v]) => v));
  const legend = shown.map((s, i) => [COLOURS[i % COLOURS.length],
    `${s.label}: ${s.points.length ? unit.fmt(s.points.at(-1)[1]) : "-"}`]);
  if (!values.length)
    return figure(name, title, emptySvg(name, "no data yet"), legend);
  const ticks = log ? log2Ticks(Math.min(...values), Math.max(...values))
                   : linearTicks(Math.max(...values) * 1.05 || 1, unit.base);
  const sc = scales(t0, tEnd, ticks[0], ticks.at(-1), log);
  const yTicks = ticks.map(v => [v, unit.tick(v)]);
  const svg = plot(name);
  shown.forEach((s, i) => {
    const pts = [];
    s.points.forEach(([t, v], j) => {
      pts.push(`${sc.x(t)},${sc.y(v)}`);
      if (step) {
        const next = j + 1 < s.points.length ? s.points[j + 1][0] : tEnd;
        pts.push(`${sc.x(next)},${sc.y(v)}`);
      }
    });
    svg.append(svgEl("polyline", {points: pts.join(" "), fill: "none",
                                  "class": "series", "data-label": s.label,
                                  stroke: COLOURS[i % COLOURS.length],
                                  "stroke-width": 1.5}));
  });
  drawAxes(svg, sc, timeTicks(t0, tEnd), yTicks, "time (h:m:s)",
           unit.title);
  return figure(name, title, svg, legend);
}

// The window's flow sizes: 'counts[i]' flows in [2^i, 2^(i+1)) bytes.
function histogramChart(counts, samples) {
  const title = "Window's flow sizes";
  const legend = [[COLOURS[0], `in window: ${samples ?? "-"} flows`]];
  const first = counts.findIndex(c => c > 0);
  if (first < 0)
    return figure("histogram", title,
                  emptySvg("histogram", "no flows in the window"), legend);
  const lo = Math.max(0, Math.min(first, counts.length - 8));
  const bins = counts.slice(lo);
  const yTickVals = linearTicks(Math.max(...bins) * 1.05, 10);
  const sc = scales(lo, lo + bins.length, 0, yTickVals.at(-1), false);
  const svg = plot("histogram");
  bins.forEach((c, j) => {
    const i = lo + j, x = sc.x(i), w = sc.x(i + 1) - x;
    const bar = svgEl("rect", {"class": "bar", x: x + 1, width: Math.max(w - 2, 1),
                               y: sc.y(c), height: sc.y(0) - sc.y(c),
                               fill: COLOURS[0], "data-count": c});
    bar.append(svgEl("title", {}, `${bytes(2 ** i)} to ${bytes(2 ** (i + 1))}: ${c} flows`));
    svg.append(bar);
  });
  const every = Math.ceil(bins.length / 7);
  const xTicks = [];
  for (let i = lo; i <= lo + bins.length; i += every) xTicks.push([i, bytes(2 ** i)]);
  drawAxes(svg, sc, xTicks, yTickVals.map(v => [v, count(v)]),
           "flow size (bytes, powers of 2)", "flows");
  return figure("histogram", title, svg, legend);
}

function queueTable(queues) {
  const head = el("tr", {}, ...["queue", "tx packets", "tx bytes", "tx bytes/s",
                                "backlog (packets)", "backlog (bytes)",
                                "dropped (packets)", "dropped (bytes)"]
    .map(t => el("th", {}, t)));
  const st = (q, k) => q.status ? q.status[k] ?? "" : "";
  const rows = queues.map(q => el("tr", {"class": "queue",
                                         "data-queue": q.queue_id},
    ...[q.queue_id, q.tx_packets ?? "", q.tx_bytes ?? "",
        bytes(q.tx_bytes_per_s ?? 0) + "/s", st(q, "backlog-packets"),
        st(q, "backlog-bytes"), st(q, "dropped-packets"),
        st(q, "dropped-bytes")]
      .map((v, i) => el("td", {"class": ["queue", "tx-packets", "tx-bytes",
                                         "tx-rate", "backlog-packets",
                                         "backlog-bytes", "dropped-packets",
                                         "dropped-bytes"][i]}, String(v)))));
  return el("table", {}, head, ...rows);
}

function charts(state, hist, rates) {
  const status = state.status || {};
  const tEnd = Math.max(rates.at(-1)?.time ?? 0, hist.at(-1)?.time ?? 0)
               || Date.now() / 1000;
  const nThr = hist.at(-1)?.thresholds.length ?? 0;
  const thresholds = Array.from({length: nThr}, (_, i) => ({
    label: `threshold ${i + 1}`,
    points: hist.filter(s => s.thresholds.length === nThr)
                .map(s => [s.time, s.thresholds[i]])}));
  const queueIds = [...new Set(rates.flatMap(r => r.queues.map(q => q.queue_id)))]
    .sort((a, b) => a - b);
  const perQueue = key => queueIds.map(id => ({
    label: `queue ${id}`,
    points: rates.map(r => [r.time, r.queues.find(q => q.queue_id === id)?.[key] ?? null])}));
  const byteRate = {fmt: v => `${bytes(v)}/s`, tick: bytes, base: 1024,
                    title: "bytes/s"};
  const perSecond = what => ({fmt: v => `${count(v)} ${what}/s`, tick: count,
                              base: 10, title: `${what}/s`});
  const histogram = (status["window-histogram"] || "").split(",")
    .filter(v => v !== "").map(Number);
  return el("div", {"class": "charts"},
    timeChart("thresholds", "Thresholds", thresholds, tEnd,
              {fmt: bytes, tick: bytes, title: "threshold (bytes)"},
              {step: true, log: true}),
    timeChart("queue-bytes", "Bytes sent per queue", perQueue("tx_bytes_per_s"),
              tEnd, byteRate),
    timeChart("queue-drops", "Drops per queue", perQueue("dropped_packets_per_s"),
              tEnd, perSecond("packets")),
    timeChart("completions", "Completions", [{label: "completions",
              points: rates.map(r => [r.time, r.completions_per_s])}],
              tEnd, perSecond("flows")),
    histogramChart(histogram, status["window-samples"]));
}

async function portSection(sw, port) {
  const base = `switches/${sw.dpid}/ports/${encodeURIComponent(port.port)}`;
  const [state, hist, rates] = await Promise.all([
    getJson(base), getJson(`${base}/history`), getJson(`${base}/rates`)]);
  const status = state.status || {};
  return el("section", {"class": "port", "data-switch": sw.dpid,
                        "data-port": port.port},
    el("h2", {}, `${sw.dpid} (${sw.bridge ?? "?"}) port ${port.port} `,
       el("span", {"class": sw.connected ? "up" : "down"},
          sw.connected ? "connected" : "disconnected")),
    el("p", {}, "config: ",
       el("span", {"class": "config"}, keyValues(state.config || {}))),
    el("p", {}, "current thresholds (bytes): ",
       el("span", {"class": "thresholds"},
          status["current-thresholds"] ?? state.nxst_error ?? "not polled yet"),
       ` (version ${status["thresholds-version"] ?? "-"}, completions `
       + `${status["completions"] ?? "-"})`),
    charts(state, hist.history, rates.rates),
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

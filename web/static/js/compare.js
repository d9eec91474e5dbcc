// The compare view: two or more runs picked in the list, their curves overlaid (inline SVG, one colour per run,
// a legend in text) and the config keys that differ between them. Every value is set as text.

import { el } from "./dom.js";
import { call } from "./runs-api.js";

const NS = "http://www.w3.org/2000/svg";
const COLOURS = ["#2457c5", "#c5412a", "#1f8a4c", "#8a3fc5", "#b8860b", "#0e7c86", "#c52a86", "#555"];
const $ = (id) => document.getElementById(id);

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const short = (v) => Number(v.toPrecision(3)).toString();

export function overlayChart(name, runs, { width = 360, height = 150 } = {}) {
  const lines = runs.map((run, i) => ({ id: run.id, colour: COLOURS[i % COLOURS.length], points: run.curves[name] || [] }));
  const all = lines.flatMap((l) => l.points);
  const figure = el("figure", { class: "chart overlay", "data-metric": name });
  const caption = el("figcaption", { text: all.length ? name : `${name} (no values)` });
  const plot = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": `${name} of runs ${lines.map((l) => l.id).join(", ")}` });
  const pad = { left: 46, right: 8, top: 8, bottom: 18 };
  plot.append(svg("rect", { x: pad.left, y: pad.top, width: width - pad.left - pad.right,
    height: height - pad.top - pad.bottom, fill: "#fbfcfe", stroke: "#d9dde5" }));
  if (all.length) {
    const xs = all.map((p) => p[0]), ys = all.map((p) => p[1]);
    const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
    let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    if (y0 === y1) { y0 -= 0.5; y1 += 0.5; }
    const px = (x) => pad.left + (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)) * (width - pad.left - pad.right);
    const py = (y) => height - pad.bottom - ((y - y0) / (y1 - y0)) * (height - pad.top - pad.bottom);
    for (const line of lines.filter((l) => l.points.length)) {
      plot.append(svg("polyline", { points: line.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" "),
        fill: "none", stroke: line.colour, "stroke-width": 1.6, "data-run-id": line.id }));
    }
    plot.append(svg("text", { x: pad.left - 4, y: pad.top + 9, "text-anchor": "end", "font-size": 10, fill: "#5b6475" }, short(y1)));
    plot.append(svg("text", { x: pad.left - 4, y: height - pad.bottom, "text-anchor": "end", "font-size": 10, fill: "#5b6475" }, short(y0)));
    plot.append(svg("text", { x: pad.left, y: height - 4, "font-size": 10, fill: "#5b6475" }, `step ${x0}`));
    plot.append(svg("text", { x: width - pad.right, y: height - 4, "text-anchor": "end", "font-size": 10, fill: "#5b6475" }, `${x1}`));
  }
  figure.append(caption, plot);
  return figure;
}

const show = (value) => (value === null || value === undefined ? "(not set)" : typeof value === "string" ? value : JSON.stringify(value));

export async function compareRuns(ids) {
  const box = $("compare");
  box.hidden = false;
  $("compare-note").textContent = `Comparing ${ids.join(", ")}…`;
  try {
    const found = await call(`/compare?ids=${ids.join(",")}`);
    $("compare-legend").replaceChildren(...found.runs.map((run, i) => el("li", {},
      el("span", { class: `swatch c${i % COLOURS.length}`, "aria-hidden": "true" }),
      el("code", { text: run.id }), ` ${run.state}`)));
    $("compare-charts").replaceChildren(...found.metrics.map((name) => overlayChart(name, found.runs)));
    const keys = Object.keys(found.config_differences);
    $("compare-diff").replaceChildren(
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "config key" }),
        ...found.runs.map((run) => el("th", { scope: "col" }, el("code", { text: run.id }))))),
      el("tbody", {}, ...keys.map((key) => el("tr", { "data-key": key }, el("th", { scope: "row" }, el("code", { text: key })),
        ...found.runs.map((run) => el("td", { text: show(found.config_differences[key][run.id]) }))))));
    $("compare-note").textContent = keys.length ? `${keys.length} config key(s) differ.` : "The configs are the same.";
    $("compare-title").focus();
  } catch (error) {
    $("compare-note").textContent = `Compare failed: ${error.message}`;
  }
}

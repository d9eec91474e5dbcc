// The compare view: two or more runs picked in the list, their curves overlaid (inline SVG, one colour per run,
// a legend in text) and the config keys that differ between them. Every value is set as text.

import { plotLines } from "./chart.js";
import { count, el } from "./dom.js";
import { call } from "./runs-api.js";

const COLOURS = ["#2457c5", "#c5412a", "#1f8a4c", "#8a3fc5", "#b8860b", "#0e7c86", "#c52a86", "#555"];
const $ = (id) => document.getElementById(id);

export function overlayChart(name, runs, { width = 360, height = 150 } = {}) {
  const lines = runs.map((run, i) => ({ id: run.id, colour: COLOURS[i % COLOURS.length],
                                        points: (run.curves[name] || []).map(([x, y]) => ({ x, y })) }));
  const empty = !lines.some((l) => l.points.length);
  const figure = plotLines(name, empty ? `${name} (no values)` : name, lines,
                           { width, height, label: `${name} of runs ${lines.map((l) => l.id).join(", ")}` });
  figure.classList.add("overlay");
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
    $("compare-note").textContent = keys.length ? `${count(keys.length, "config key")} ${keys.length === 1 ? "differs" : "differ"}.` : "The configs are the same.";
    $("compare-title").focus();
  } catch (error) {
    $("compare-note").textContent = `Compare failed: ${error.message}`;
  }
}

// The run's health: findings of the run-health engine (GET /runs/{id}/health, the same as `grpo health`), listed
// with their code, steps, numbers, hint and fix, and marked on the chart of the metric they are about, over the
// steps where they appear. Fetched every few seconds while the run is active, once more when it ends.

import { el } from "./dom.js";

const EVERY_MS = 4000;
let state = { id: null, report: null, fetchedAt: 0, fetchedState: null };

export function resetHealth(id) {
  state = { id, report: null, fetchedAt: 0, fetchedState: null };
  render();
}

// Ask again when due: often while the run is active, and once after its state changed (its last lines).
export async function refreshHealth(call, run) {
  if (!state.id || state.id !== run.id) return;
  const due = Date.now() - state.fetchedAt >= EVERY_MS && (run.state === "running" || run.state === "queued");
  if (!due && state.fetchedState === run.state && state.report) return;
  const id = state.id;
  state.fetchedAt = Date.now();
  try {
    const report = await call(`/${id}/health`);
    if (state.id !== id) return;
    state.report = report;
    state.fetchedState = run.state;
  } catch { /* the next poll asks again */ }
  render();
}

// Errors first, then warnings, then notes; the engine's order within each.
const RANK = { error: 0, warning: 1, info: 2 };
export const findings = () => [...(state.report?.findings || [])]
  .sort((a, b) => (RANK[a.severity] ?? 3) - (RANK[b.severity] ?? 3));

// Every stretch of steps where a finding held ([first, last] pairs): the engine's `extent.stretches` where it gives
// them, else the one stretch of `steps`.
const stretchesOf = (f) => {
  const given = f.extent?.stretches ?? f.stretches;
  return Array.isArray(given) && given.length ? given : Array.isArray(f.steps) ? [f.steps] : [];
};

// The marks for one chart: every finding about that metric, over each stretch where it held.
export const marksFor = (metric) => findings()
  .filter((f) => f.metric === metric)
  .flatMap((f) => stretchesOf(f).map(([from, to]) => ({ from, to, code: f.code, severity: f.severity })));

// Metrics that have a finding and a chart to show it on (numbers logged under that name).
export const findingMetrics = () => [...new Set(findings().map((f) => f.metric).filter(Boolean))];

const span = ([from, to]) => (from === to ? `${from}` : `${from}-${to}`);

// "steps 67-69", or every stretch: "steps 67-69, 80-1482 (1406 steps in 2 stretches)"
function stepsText(finding) {
  const stretches = stretchesOf(finding);
  if (!stretches.length) return "";
  const [first] = stretches;
  if (stretches.length === 1) return first[0] === first[1] ? `step ${first[0]}` : `steps ${span(first)}`;
  const shown = stretches.slice(0, 4).map(span).join(", ") + (stretches.length > 4 ? ", …" : "");
  const held = finding.extent?.logged_steps;
  const of = finding.extent?.of;
  const count = held != null && of != null ? `${held} of ${of} logged steps`
    : `${stretches.reduce((sum, [from, to]) => sum + to - from + 1, 0)} steps`;
  return `steps ${shown} (${count}, in ${stretches.length} stretches)`;
}

function fixText(fix) {
  if (!fix) return "";
  const parts = [...Object.entries(fix.set || {}).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
                 ...(fix.unset || []).map((k) => `unset ${k}`)];
  return parts.length ? `fix: ${parts.join(", ")}${fix.title ? ` (${fix.title})` : ""}` : "";
}

function item(finding) {
  const values = (finding.values || []).slice(0, 8).map((v) => (typeof v === "number" ? Number(v.toPrecision(3)) : v));
  return el("li", { class: `finding ${finding.severity}`, "data-code": finding.code,
                    "data-steps": stretchesOf(finding).map((s) => s.join("-")).join(",") },
    el("div", { class: "finding-head" },
      el("code", { text: finding.code }), el("span", { class: "severity", text: finding.severity }),
      el("span", { class: "where muted", text: stepsText(finding) })),
    el("div", { class: "message", text: finding.message }),
    finding.metric ? el("div", { class: "muted small", text: `${finding.metric}: ${values.join(", ")}` }) : "",
    finding.hint ? el("div", { class: "hint", text: finding.hint }) : "",
    fixText(finding.fix) ? el("div", { class: "fix", text: fixText(finding.fix) }) : "");
}

function render() {
  const box = document.getElementById("health-list");
  const summary = document.getElementById("health-summary");
  if (!box || !summary) return;
  const report = state.report;
  if (!report) { summary.textContent = "no health report yet"; box.replaceChildren(); return; }
  const list = findings();
  const errors = report.errors || [];
  summary.textContent = errors.length && !list.length ? "nothing logged yet to judge"
    : list.length ? `${list.length} finding${list.length === 1 ? "" : "s"}${report.live ? " so far" : ""}`
    : `healthy: no finding${report.live ? " so far" : ""} over ${report.steps} step${report.steps === 1 ? "" : "s"}`;
  summary.dataset.healthy = String(Boolean(report.healthy));
  box.replaceChildren(...list.map(item));
}

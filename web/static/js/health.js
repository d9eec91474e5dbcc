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

export const findings = () => state.report?.findings || [];

// The marks for one chart: every finding about that metric, over its steps.
export const marksFor = (metric) => findings()
  .filter((f) => f.metric === metric && Array.isArray(f.steps))
  .map((f) => ({ from: f.steps[0], to: f.steps[1], code: f.code, severity: f.severity }));

// Metrics that have a finding and a chart to show it on (numbers logged under that name).
export const findingMetrics = () => [...new Set(findings().map((f) => f.metric).filter(Boolean))];

const stepsText = (steps) => (!steps ? "" : steps[0] === steps[1] ? `step ${steps[0]}` : `steps ${steps[0]}-${steps[1]}`);

function fixText(fix) {
  if (!fix) return "";
  const parts = [...Object.entries(fix.set || {}).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
                 ...(fix.unset || []).map((k) => `unset ${k}`)];
  return parts.length ? `fix: ${parts.join(", ")}${fix.title ? ` (${fix.title})` : ""}` : "";
}

function item(finding) {
  const values = (finding.values || []).slice(0, 8).map((v) => (typeof v === "number" ? Number(v.toPrecision(3)) : v));
  return el("li", { class: `finding ${finding.severity}`, "data-code": finding.code,
                    "data-steps": finding.steps ? finding.steps.join("-") : "" },
    el("div", { class: "finding-head" },
      el("code", { text: finding.code }), el("span", { class: "severity", text: finding.severity }),
      el("span", { class: "where muted", text: stepsText(finding.steps) })),
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
  const list = report.findings || [];
  const errors = report.errors || [];
  summary.textContent = errors.length && !list.length ? "nothing logged yet to judge"
    : list.length ? `${list.length} finding${list.length === 1 ? "" : "s"}${report.live ? " so far" : ""}`
    : `healthy: no finding${report.live ? " so far" : ""} over ${report.steps} step${report.steps === 1 ? "" : "s"}`;
  summary.dataset.healthy = String(Boolean(report.healthy));
  box.replaceChildren(...list.map(item));
}

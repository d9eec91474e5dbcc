// Smoke test: post the config in the form to POST /api/v1/smoke (the same token and run policy as Launch)
// and show the report in the Launch dialog: one line per setting group, then what failed and where.
// The button and the report are added to the dialog here, so the page itself needs no markup for them.
// The smoke runs at the world size Launch uses (the toolbar's, else the file's), and its report is for that
// config at that size only: it goes away when either changes (another config opened, an edit, a fix).

import { count, el } from "./dom.js";
import { call, explainError, setToken } from "./runs-api.js";

const $ = (id) => document.getElementById(id);
const MARK = { exercised: "ran", substituted: "substituted", not_exercised: "not run" };

export function renderSmokeReport(target, report) {
  const verdict = report.passed
    ? `Passed: ${count(report.steps, "optimizer step")} in ${report.seconds}s`
    : `Failed (${report.component ?? "?"}) after ${report.seconds ?? "?"}s: ${report.error ?? ""}`;
  const where = report.config_line ? el("div", { class: "hint", text: `configured at line ${report.config_line.line}: ${report.config_line.text}` }) : null;
  const rows = (report.groups ?? []).map((g) => el("li", { class: `smoke-${g.status}` },
    el("strong", { text: `${MARK[g.status] ?? g.status} ` }), `${g.group}: ${g.detail}`));
  const frames = (report.traceback ?? []).slice(0, 8).map((f) => el("li", { class: "code", text: f }));
  // (replaceChildren writes a null as the text "null": the parts a report lacks are left out)
  target.replaceChildren(...[
    el("p", { class: report.passed ? "" : "error-text", text: verdict }), where,
    el("ul", { class: "diag-list" }, ...rows), frames.length ? el("ol", { class: "diag-list" }, ...frames) : null,
  ].filter(Boolean));
}

// hooks: { config(), worldSize(), onConfigChange(listener) }
export function setupSmoke(hooks) {
  // beside Launch (the dialog has another, hidden, row of actions: the ways on when output_dir is another run's)
  const actions = $("launch-apply")?.closest(".dialog-actions");
  if (!actions || $("smoke-apply")) return;
  const button = el("button", { id: "smoke-apply", type: "button", text: "Smoke test" });
  const output = el("div", { id: "smoke-report", role: "status" });
  actions.before(output);
  actions.prepend(button);
  const subject = () => JSON.stringify([hooks.config(), hooks.worldSize() ?? null]);
  let shown = null; // the subject of the report on show (or of the smoke under way)
  hooks.onConfigChange?.(() => {
    if (shown !== null && subject() !== shown) { shown = null; output.replaceChildren(); }
  });
  button.addEventListener("click", async () => {
    setToken($("launch-token").value);
    button.disabled = true;
    const mine = (shown = subject());
    const worldSize = hooks.worldSize();
    output.replaceChildren(el("p", { class: "muted", text: "Running the first optimizer steps on the service's CPU…" }));
    try {
      const report = await call(`/api/v1/smoke${worldSize ? `?world_size=${worldSize}` : ""}`, {
        method: "POST", body: JSON.stringify(hooks.config()), headers: { "Content-Type": "application/json" },
      });
      if (shown === mine) renderSmokeReport(output, report);
    } catch (error) {
      if (shown !== mine) return;
      const errors = error.body?.diagnostics?.filter((d) => d.severity === "error") ?? [];
      output.replaceChildren(el("p", { class: "error-text", text: errors.length
        ? `The service will not run this config: ${errors.map((d) => `${d.code} ${d.message}`).join("; ")}`
        : explainError(error) }));
    } finally {
      button.disabled = false;
    }
  });
}

// The environment in the Launch dialog: each time the dialog opens, POST /api/v1/doctor judges the service's own
// interpreter (the one its runs start with) against the config's TRL release and the features the config uses
// (vLLM, Liger, bitsandbytes, flash-attn, DeepSpeed), and the dialog lists what is missing or wrong with the pin
// that fixes it. These are advisories: the environment is the operator's, so Launch stays on, but a run that
// would fail at its first import is named before it is started.

import { doctor } from "./api.js";
import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function packagesLine(environment) {
  const packages = environment?.packages || {};
  const named = ["trl", "transformers", "torch", "vllm"].filter((name) => packages[name]);
  return named.map((name) => `${name} ${packages[name]}`).join(", ");
}

export function renderDoctor(target, report, diagNode) {
  const diagnostics = report.diagnostics || [];
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  const packages = packagesLine(report.environment);
  const runsWith = report.runs_with ? `, where runs train with ${report.runs_with}` : "";
  const summary = diagnostics.length
    ? `The service's environment${runsWith}${packages ? ` (${packages})` : ""}: ${plural(diagnostics.length, "problem")} ` +
      `for this config${errors ? "; a run is likely to fail when it starts" : ""}. Install the pins named below, ` +
      "or change the config."
    : `The service's environment${runsWith}${packages ? ` (${packages})` : ""} has what this config uses.`;
  target.replaceChildren(
    el("h3", { text: "Environment (grpo doctor)" }),
    el("p", { class: errors ? "error-text" : "muted", text: summary }),
    // (replaceChildren writes a null as the text "null": an empty list is left out, not written)
    diagnostics.length ? el("ul", { class: "diag-list" }, ...diagnostics.map((d) => el("li", {}, diagNode(d)))) : "");
  target.dataset.state = errors ? "error" : diagnostics.length ? "warning" : "ok";
}

// hooks: { config(), worldSize(), trlVersion(), diags (DiagnosticsView) }
export function setupDoctor(hooks) {
  const dialog = $("launch-dialog");
  const anchor = $("launch-choices");
  if (!dialog || !anchor || $("launch-doctor")) return;
  const target = el("section", { id: "launch-doctor", "aria-live": "polite" });
  anchor.after(target);
  let asked = 0; // only the answer to the latest opening is drawn
  $("launch-open").addEventListener("click", async () => {
    const ticket = ++asked;
    target.dataset.state = "pending";
    target.replaceChildren(el("p", { class: "muted", text: "Checking the service's environment (grpo doctor)…" }));
    try {
      const report = await doctor(hooks.config(), { worldSize: hooks.worldSize(), trlVersion: hooks.trlVersion?.() });
      if (ticket === asked) renderDoctor(target, report, (d) => hooks.diags.diagNode(d));
    } catch (error) {
      if (ticket !== asked) return;
      target.dataset.state = "unknown";
      target.replaceChildren(el("p", { class: "muted", text: "The service's environment could not be checked " +
        `(${error.status ? `HTTP ${error.status}` : "the service did not answer"}); Launch still checks the config.` }));
    }
  });
}

// A verl launch script or YAML brought in by Import: the server reads it with verl's own engine (the one
// `grpo validate --dialect verl` and `grpo explain` use) and converts it as `grpo convert --to trl` does. This card
// shows what the form cannot: the verl file's diagnostics (lines in that file), each run's schedule in verl's
// names with the TRL equivalents, and what the conversion lost or why it was refused.

import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);

function diagnosticItem(d) {
  const where = d.line ? ` line ${d.line}` : "";
  return el("li", { class: `diag ${d.severity}` },
    el("span", { class: "verl-code", text: `${d.severity} ${d.code}${where}: ` }), d.message,
    d.hint ? el("div", { class: "muted", text: d.hint }) : "");
}

let shown = { loaded: null, inForm: false }; // what the card shows, for Undo to come back to

// What the card shows now: { loaded, inForm } (loaded null: the card is hidden).
export function verlCardState() {
  return { ...shown };
}

// loaded: POST /api/v1/load's answer for a verl file, or null to hide the card (a TRL file was imported).
// inForm false: the file's conversion is no longer in the form (Undo took it out); the card stays, as the verl
// file's diagnostics and schedule are still the answer to it, and says so.
export function showVerlCard(loaded, { inForm = true } = {}) {
  const card = $("verl-card");
  card.hidden = !loaded;
  shown = { loaded, inForm: Boolean(loaded?.config) && inForm };
  if (!loaded) return;
  const verdict = !loaded.config ? `Not put into the form: no TRL equivalent: ${loaded.refused}`
    : shown.inForm ? "Converted to TRL for the form (as grpo convert --to trl does). Export writes either dialect."
      : "Not in the form any more: Undo put back the config from before the import. Import the file again to " +
        "convert it (as grpo convert --to trl does).";
  const problems = loaded.diagnostics.filter((d) => d.severity !== "info");
  $("verl-verdict").textContent = verdict;
  $("verl-verdict").className = shown.inForm ? "muted" : "warn-text";
  $("verl-diagnostics").replaceChildren(...(problems.length ? problems.map(diagnosticItem)
    : [el("li", { class: "muted", text: "verl's checks find no problem." })]));
  $("verl-schedule").replaceChildren(...loaded.cards.map((c) => el("pre", { class: "verl-schedule",
    text: (loaded.cards.length > 1 ? `run at line ${c.line}\n` : "") + c.lines.join("\n") })));
  $("verl-lossy").replaceChildren(...loaded.lossy.map((l) => el("li", { text: `lossy: ${l}` })));
  if (!loaded.config) $("verl-title").focus(); // nothing changed in the form: the card is the answer
}

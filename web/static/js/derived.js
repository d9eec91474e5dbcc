// The derived-values panel and the micro-step timeline, drawn from the server's `derived` object and the explain
// document. Nothing is computed here: the numbers are the CLI's.

import { el } from "./dom.js";

const ROWS = [
  ["world_size", "World size", "training processes the schedule assumes"],
  ["generation_batch_size", "Generation batch", "completions generated at once, all processes"],
  ["prompts_per_generation", "Prompts per generation", "unique prompts in one generation batch"],
  ["steps_per_generation", "Steps per generation", "micro-steps that one generation batch feeds"],
  ["generate_every_micro_steps", "Generate every", "micro-steps between two generations"],
  ["optimizer_steps_per_generation", "Optimizer steps per generation", "updates made from one generation batch"],
  ["completions_per_optimizer_step", "Completions per optimizer step", "over all processes"],
  ["old_logprobs_needed", "Old log-probs needed", "an extra forward pass; the clipped ratio is active"],
  ["optimizer_steps_per_epoch", "Optimizer steps per epoch", "with the dataset size given"],
];

function shown(value) {
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number" && !Number.isInteger(value)) return String(Math.round(value * 1000) / 1000);
  return String(value);
}

// The valid world sizes as buttons that set the toolbar's world size (the current one is pressed).
function worldSizes(sizes, current, onPick) {
  if (!Array.isArray(sizes)) return null;
  if (!sizes.length) return el("p", { class: "muted small", text: "Valid world sizes: none up to 64" });
  return el("div", { class: "world-sizes", role: "group", "aria-label": "Valid world sizes" },
    el("span", { class: "muted small", text: "Valid world sizes: " }),
    sizes.slice(0, 12).map((n) => el("button", { type: "button", class: "chip", text: String(n), "data-world-size": n,
      "aria-pressed": String(n === current), title: `set the toolbar's world size to ${n}`, onclick: () => onPick(n) })),
    sizes.length > 12 ? el("span", { class: "muted small", text: " …" }) : null);
}

// The explain document: derived numbers; valid world sizes and notes go to `notesBox`.
export function renderDerived(container, notesBox, doc, onWorldSize = () => {}) {
  const derived = doc?.derived;
  const notes = (doc?.notes || []).map((n) => el("li", { text: n }));
  notesBox.replaceChildren(worldSizes(doc?.valid_world_sizes, doc?.world_size, onWorldSize) || "",
                           notes.length ? el("ul", { class: "notes" }, notes) : "");
  if (!derived || derived.generation_batch_size === undefined) {
    container.replaceChildren(el("p", { class: "muted", text: "No schedule: the batch settings are not valid at " +
      `world size ${derived?.world_size ?? 1}. Fix the batch errors to see it.` }));
    return;
  }
  const list = el("dl", { class: "derived-list" });
  for (const [key, label, help] of ROWS) {
    if (derived[key] === undefined || derived[key] === null) continue;
    list.append(el("div", { class: "derived-item", "data-key": key, title: help },
      el("dt", { text: label }), el("dd", { text: shown(derived[key]) })));
  }
  container.replaceChildren(list);
}

// Micro-step entries from the explain document, as [{generates, optimizer_step}].
export function timelineOf(doc) {
  const raw = Array.isArray(doc?.schedule) ? doc.schedule : [];
  // optimizer_step: the number of the optimizer step that follows this micro-step, or null
  return raw.filter((s) => s && typeof s === "object")
    .map((s) => ({ generates: Boolean(s.generates), optimizerStep: s.optimizer_step != null && s.optimizer_step !== false }));
}

function describe(steps) {
  const at = (pred) => steps.map((s, i) => (pred(s) ? i + 1 : null)).filter((i) => i !== null);
  return `${steps.length} micro-steps: generation at ${at((s) => s.generates).join(", ") || "none"}; ` +
    `optimizer step after ${at((s) => s.optimizerStep).join(", ") || "none"}; the others reuse the buffer`;
}

export function renderTimeline(container, doc) {
  const steps = timelineOf(doc);
  if (!steps.length) { container.replaceChildren(); return; }
  const cells = steps.map((s, i) => el("span", {
    class: `tick ${s.generates ? "gen" : "reuse"}${s.optimizerStep ? " step" : ""}`,
    title: `micro-step ${i + 1}: ${s.generates ? "generate" : "reuse buffer"}${s.optimizerStep ? ", then optimizer step" : ""}`,
    text: s.generates ? "G" : "·",
  }));
  container.replaceChildren(
    el("p", { class: "timeline-title", text: `The first ${steps.length} micro-steps (process 0)` }),
    el("div", { class: "ticks", role: "img", "aria-label": describe(steps) }, cells),
    el("p", { class: "legend" }, el("span", { class: "tick gen", text: "G" }), " generate ",
      el("span", { class: "tick reuse", text: "·" }), " reuse buffer ",
      el("span", { class: "tick reuse step legend-step", text: "·" }), " optimizer step after"));
}

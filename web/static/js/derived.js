// The derived-values panel and the micro-step timeline, drawn from the server's `derived` object and the explain
// document. Nothing is computed here: the numbers, their formulas, the relations TRL checks (and which one fails),
// the walk and the "why" are the engine's, as `grpo explain` prints them.

import { count, el } from "./dom.js";

// [key, label, what it means, its unit where the label does not say it (a number without one is ambiguous)]
const ROWS = [
  ["world_size", "World size", "training processes the schedule assumes", "process"],
  ["generation_batch_size", "Generation batch", "completions generated at once, all processes", "completion"],
  ["prompts_per_generation", "Prompts per generation", "unique prompts in one generation batch"],
  ["steps_per_generation", "Steps per generation", "micro-steps one pass over a generation batch takes (times the " +
    "passes: the micro-steps between two generations)", "micro-step"],
  ["completions_per_process_per_generation", "Buffer per process", "completions each process generates and holds; " +
    "each micro-step trains on one slice of it", "completion"],
  ["per_device_train_batch_size", "Slice per micro-step", "completions each process trains on in one micro-step",
    "completion"],
  ["num_iterations", "Passes over each generation", "how often each slice of a generation is trained on"],
  ["generate_every_micro_steps", "Generate every", "micro-steps between two generations", "micro-step"],
  ["optimizer_steps_per_generation", "Optimizer steps per generation", "updates made from one generation batch"],
  ["completions_per_optimizer_step", "Completions per optimizer step", "over all processes"],
  ["old_logprobs_needed", "Old log-probs needed", "yes: an extra forward pass computes them, and the clipped ratio " +
    "can act (the weights change before a generation is used up)"],
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

// The relations TRL's batch checks rest on, each holding or failing; a failing one with its diagnostic (code,
// message, hint and fix buttons, drawn by `diagNode`) found by the code the engine names.
// `checksOnly`: a valid batch lists the checks (its derivation is in the numbers above), a refused one every step.
function relationsList(doc, diagNode, checksOnly) {
  const relations = (Array.isArray(doc?.relations) ? doc.relations : []).filter((r) => !checksOnly || r.problem);
  if (!relations.length) return null;
  return el("ul", { class: "relations", "aria-label": "Relations TRL checks" }, relations.map((r) => {
    const diags = r.holds ? [] : (doc.diagnostics || []).filter((d) => d.code === r.code);
    return el("li", { class: `relation ${r.holds ? "holds" : "fails"}`, "data-name": r.name, title: r.says },
      el("span", { class: "mark", text: r.holds ? "✓" : "✗", "aria-label": r.holds ? "holds" : "fails" }), " ",
      el("code", { class: "formula", text: r.formula }),
      r.holds ? null : el("span", { class: "code", text: ` fails: ${r.code}` }),
      r.holds ? null : el("div", { class: "says small", text: r.says }),
      diags.map((d) => (diagNode ? diagNode(d) : el("div", { class: "diag error", "data-code": d.code,
                                                              text: `${d.code} ${d.message}` }))));
  }));
}

// grpo explain's "why steps_per_generation appears twice", as the engine words it.
function whyBlock(why) {
  if (!why?.lines?.length) return null;
  return el("div", { id: "schedule-why", class: "why" }, el("p", { class: "why-title", text: why.title }),
    why.lines.map((line) => el("p", { class: "small", text: line })));
}

function derivedList(derived) {
  const formulas = derived.formulas || {};
  const list = el("dl", { class: "derived-list" });
  for (const [key, label, help, unit] of ROWS) {
    if (derived[key] === undefined || derived[key] === null) continue;
    const value = unit && Number.isInteger(derived[key])
      ? count(derived[key], unit, unit === "process" ? "processes" : undefined) : shown(derived[key]);
    list.append(el("div", { class: "derived-item", "data-key": key, title: help },
      el("dt", { text: label }), el("dd", { text: value }),
      formulas[key] ? el("dd", { class: "formula", text: formulas[key] }) : null));
  }
  return list;
}

// The explain document: derived numbers with their formulas and the relations they rest on; valid world sizes and
// notes go to `notesBox`. A batch TRL refuses is shown as its relations, the failing one with its fix.
export function renderDerived(container, notesBox, doc, onWorldSize = () => {}, diagNode = null) {
  const derived = doc?.derived;
  const notes = (doc?.notes || []).map((n) => el("li", { text: n }));
  notesBox.replaceChildren(worldSizes(doc?.valid_world_sizes, doc?.world_size, onWorldSize) || "",
                           notes.length ? el("ul", { class: "notes" }, notes) : "");
  const valid = derived && derived.generation_batch_size !== undefined;
  const relations = relationsList(doc, diagNode, valid);
  if (!valid) {
    const at = `world size ${derived?.world_size ?? doc?.world_size ?? 1}`;
    container.replaceChildren(relations
      ? el("p", { class: "schedule-refused", text: `TRL refuses this batch at ${at}: the derivation stops at the ` +
                  "relation marked ✗ (its diagnostic and fixes are below it)." })
      : el("p", { class: "muted", text: `No schedule at ${at}: the config's fields have errors to fix first.` }),
      relations || "");
    return;
  }
  container.replaceChildren(derivedList(derived),
    relations ? el("p", { class: "relations-title muted small", text: "The relations TRL checks:" }) : "",
    relations || "", whyBlock(doc.why) || "");
}

// Micro-step entries from the explain document, as the engine walked them.
export function timelineOf(doc) {
  const raw = Array.isArray(doc?.schedule) ? doc.schedule : [];
  return raw.filter((s) => s && typeof s === "object").map((s) => ({
    n: s.micro_step, generates: Boolean(s.generates), generation: s.generation, copyOf: s.copy_of,
    slice: s.buffer_slice, pass: s.iteration, optimizerStep: s.optimizer_step ?? null, window: s.window,
  }));
}

function describe(steps) {
  const at = (pred) => steps.filter(pred).map((s) => s.n);
  return `${steps.length} micro-steps: generation at ${at((s) => s.generates).join(", ") || "none"}; ` +
    `optimizer step after ${at((s) => s.optimizerStep !== null).join(", ") || "none"}; the others reuse the buffer`;
}

// One micro-step in words, as `grpo explain` walks it: generate or reuse, the slice and pass trained on, the
// optimizer step it completes.
function walkLine(s, perGeneration, passes) {
  const what = s.generates ? `generate (generation ${s.generation + 1})` : `reuse the buffer of micro-step ${s.copyOf}`;
  const step = s.optimizerStep !== null
    ? ` · then optimizer step ${s.optimizerStep} (${s.window} micro-step${s.window === 1 ? "" : "s"} accumulated)` : "";
  return `micro-step ${s.n}: ${what} · train on slice ${s.slice + 1} of ${perGeneration} · ` +
    `pass ${s.pass} of ${passes}${step}`;
}

export function renderTimeline(container, doc) {
  const steps = timelineOf(doc);
  if (!steps.length) { container.replaceChildren(); return; }
  const perGeneration = doc.derived.steps_per_generation;
  const passes = doc.derived.num_iterations;
  const cells = steps.map((s) => el("span", {
    class: `tick ${s.generates ? "gen" : "reuse"}${s.optimizerStep !== null ? " step" : ""}`,
    title: walkLine(s, perGeneration, passes), text: s.generates ? "G" : "·",
  }));
  container.replaceChildren(
    el("p", { class: "timeline-title", text: `The first ${steps.length} micro-steps (process 0)` }),
    el("div", { class: "ticks", role: "img", "aria-label": describe(steps) }, cells),
    el("p", { class: "legend" }, el("span", { class: "tick gen", text: "G" }), " generate ",
      el("span", { class: "tick reuse", text: "·" }), " reuse buffer ",
      el("span", { class: "tick reuse step legend-step", text: "·" }), " optimizer step after"),
    el("details", { class: "walk-box", open: true }, el("summary", { class: "small", text: "Micro-step by micro-step" }),
      el("ol", { class: "walk small", "aria-label": "Micro-step by micro-step" },
        steps.map((s) => el("li", { class: s.generates ? "gen" : "reuse", text: walkLine(s, perGeneration, passes) })))));
}

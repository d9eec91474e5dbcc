// Per-GPU memory bar: POST /api/v1/plan with the config being edited and the declared hardware, then draw one
// bar whose segments are the parts held at the peak (weights, gradients, optimizer, activations, logits, ...),
// scaled to the GPU's memory, and the plan's diagnostics (more processes than GPUs, ...). Redrawn after every
// validation (the checker already debounces edits). The hardware is, first that applies: what is typed here (kept
// with the draft), the file's `# grpo: --hardware` comment, the config's own `hardware:` section, else a default.
// The plan is the TRL release's picked in the toolbar, as the diagnostics are.

import { el } from "./dom.js";
import { getToken } from "./runs-api.js";

const COLORS = {
  weights: "#4e79a7", gradients: "#f28e2b", optimizer: "#e15759", activations: "#76b7b2", logits: "#59a14f",
  reference: "#edc948", lora: "#b07aa1", vllm: "#ff9da7", "kv cache": "#9c755f", "gathered weights": "#bab0ac",
  "log-prob pass": "#8cd17d", "autocast copies": "#d4a6c8", "generation logits": "#86bcb6", framework: "#79706e",
};

// Where the hardware comes from, as the status banner says it (it stands outside this panel).
const BANNER_SOURCE = {
  "typed here": "typed in the memory panel", "the default; type yours above": "the default hardware",
};

const gib = (bytes) => (bytes / 2 ** 30).toFixed(1);
export const DEFAULT_HARDWARE = "8xH100-80GB";

// Styles through the CSSOM: the page's Content-Security-Policy refuses style attributes.
function styled(node, styles) {
  Object.assign(node.style, styles);
  return node;
}

export class MemoryBar {
  // onVerdict(verdict): what the panel finds, for the form's status banner (one verdict for the whole form):
  // {state: "checking"} while an answer is on its way, then {state: "done", diagnostics, fits, spec, source}.
  // diagNode(diag): a diagnostic as the diagnostics list draws it, with a button for its fix, each alternative
  // and each world size its hint names.
  constructor({ root, getConfig, getOptions, hardware = "", onChange = () => {}, diagNode, onVerdict = () => {} }) {
    Object.assign(this, { root, getConfig, getOptions, onChange, diagNode, onVerdict });
    this.controller = null;
    this.input = el("input", { id: "hardware", type: "text", value: hardware, autocomplete: "off",
                               spellcheck: "false", placeholder: DEFAULT_HARDWARE,
                               "aria-describedby": "memory-summary" });
    this.summary = el("p", { id: "memory-summary", class: "muted", "aria-live": "polite" });
    this.bar = el("div", { id: "memory-bar", class: "memory-bar", role: "img" });
    this.legend = el("ul", { id: "memory-legend", class: "memory-legend" });
    this.diags = el("ul", { id: "memory-diagnostics", class: "memory-diags" });
    // The plan's summary lines (the same text as `grpo validate --hardware`): where the sharding, quantisation and
    // prompt length came from, and the host RAM of a node.
    this.notes = el("ul", { id: "memory-lines", class: "memory-lines muted" });
    root.replaceChildren(
      el("div", { class: "inline-field" }, [el("label", { for: "hardware", text: "Hardware (e.g. 8xH100-80GB)" }),
                                             this.input]),
      this.bar, this.summary, this.diags, this.legend, this.notes);
    this.input.addEventListener("input", () => {
      this.onChange();
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.refresh(), 300);
    });
  }

  // Put a value in the typed hardware (a config with its own hardware clears it; Undo brings it back), kept and
  // checked as if typed.
  setTyped(value) {
    this.input.value = value;
    this.onChange();
    this.refresh();
  }

  // [spec or null, where it comes from]; null: the config's hardware: section (the server reads it).
  hardware() {
    const typed = this.input.value.trim();
    if (typed) return [typed, "typed here"];
    const { fileHardware } = this.getOptions();
    if (fileHardware) return [fileHardware, "the file's # grpo: comment"];
    const section = this.getConfig().hardware;
    if (section !== undefined && section !== null) return [null, "the config's hardware: section"];
    return [DEFAULT_HARDWARE, "the default; type yours above"];
  }

  // The placeholder shows the hardware an empty input stands for (the summary says where it comes from).
  placeholder() {
    const [spec] = this.hardware();
    const section = this.getConfig().hardware;
    this.input.placeholder = spec ?? (typeof section === "string" ? section : section?.spec ?? "hardware:");
  }

  async refresh() {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const [spec, where] = this.hardware();
    this.placeholder();
    this.onVerdict({ state: "checking" });
    const q = new URLSearchParams();
    if (spec) q.set("hardware", spec);
    const { worldSize, profile, trlVersion } = this.getOptions();
    if (worldSize) q.set("world_size", worldSize);
    if (profile) q.set("profile", profile);
    // The release's defaults change what runs where (vLLM colocated by default from TRL 1.0 on, a server on GPUs of its own before).
    if (trlVersion) q.set("trl_version", trlVersion);
    try {
      // The runs token, when this tab has one: with runs on, the service then reads the dataset and model a run of
      // ours would read even outside its folder (without it, only what lies inside), so the prompt lengths are the data's.
      const token = getToken();
      const headers = { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) };
      const response = await fetch(`/api/v1/plan${q.toString() ? `?${q}` : ""}`, { method: "POST",
        signal: controller.signal, headers, body: JSON.stringify(this.getConfig()) });
      const doc = await response.json();
      if (controller === this.controller) this.draw(response.ok ? doc : null, response.ok ? null : doc.detail, where);
    } catch (exc) {
      // no answer (the server is away): the form marks the last estimate stale and redraws it once it answers
      if (exc.name !== "AbortError" && !(exc instanceof TypeError)) this.draw(null, exc.message, where);
    }
  }

  // The plan's diagnostics the panel shows: an unknown model (H005) only once a model is named.
  shownDiagnostics(doc) {
    return (doc?.diagnostics || []).filter((d) => d.code !== "GRPO-H005" || this.getConfig().model_name_or_path);
  }

  // The plan's own diagnostics (H007: more processes than the declared GPUs, ...), with their fixes.
  drawDiagnostics(doc) {
    const list = this.shownDiagnostics(doc);
    this.diags.replaceChildren(...list.map((d) => el("li", {}, this.diagNode(d))));
  }

  draw(doc, error, where = "") {
    const perGpu = doc?.per_gpu;
    this.root.dataset.fits = doc ? String(doc.fits) : "unknown";
    this.drawDiagnostics(doc);
    this.onVerdict({ state: "done", diagnostics: this.shownDiagnostics(doc), fits: doc ? doc.fits : null,
                     spec: doc?.hardware?.spec || null, source: BANNER_SOURCE[where] || where });
    this.notes.replaceChildren(...(doc?.memory_lines || []).slice(1).map((line) => el("li", { text: line })));
    if (!perGpu) {
      const model = this.getConfig().model_name_or_path;
      // the planner's own reason (doc.no_estimate), never the first warning of its list
      const why = doc?.no_estimate;
      this.bar.replaceChildren();
      this.legend.replaceChildren();
      this.summary.textContent = error ? `No estimate: ${error}`
        : !model ? "No estimate yet: set model_name_or_path (a model of the built-in catalogue, e.g. Qwen/Qwen2.5-1.5B-Instruct)."
        : `No estimate${why ? `: ${why.message}${why.hint ? ` (${why.hint})` : ""}` : ""}`;
      return;
    }
    const capacity = perGpu.capacity_bytes;
    const scale = Math.max(capacity, perGpu.total_bytes);
    const parts = perGpu.parts.filter((p) => perGpu.at_peak.includes(p.name) && p.bytes > 0);
    this.bar.replaceChildren(...parts.map((p) => styled(el("span", {
      class: "memory-part", title: `${p.name}: ${gib(p.bytes)} GiB${p.note ? ` (${p.note})` : ""}`,
      "data-part": p.name,
    }), { width: `${(100 * p.bytes / scale).toFixed(2)}%`, background: COLORS[p.name] || "#999" })),
    styled(el("span", { class: "memory-capacity" }), { left: `${(100 * capacity / scale).toFixed(2)}%` }));
    this.bar.setAttribute("aria-label", parts.map((p) => `${p.name} ${gib(p.bytes)} GiB`).join(", "));
    this.bar.classList.toggle("over", !doc.fits);
    const verdict = doc.fits ? "fits" : perGpu.total_bytes > capacity
      ? `does not fit (${gib(perGpu.total_bytes - capacity)} GiB short)`
      : "fits in memory, but the plan has a problem (below)";
    const time = doc.time?.step_seconds ? `; about ${doc.time.step_seconds.toFixed(1)} s a step` : "";
    const on = doc.hardware?.spec ? `; on ${doc.hardware.spec}${where ? ` (${where})` : ""}` : "";
    this.summary.textContent = `${gib(perGpu.total_bytes)} of ${gib(capacity)} GiB per GPU: ${verdict}${time}${on}`;
    this.legend.replaceChildren(...parts.map((p) => el("li", {}, [
      styled(el("span", { class: "swatch" }), { background: COLORS[p.name] || "#999" }),
      el("span", { text: `${p.name} ${gib(p.bytes)} GiB` })])));
  }
}

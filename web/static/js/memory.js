// Per-GPU memory bar: POST /api/v1/plan with the config being edited and the declared hardware, then draw one
// bar whose segments are the parts held at the peak (weights, gradients, optimizer, activations, logits, ...),
// scaled to the GPU's memory. Redrawn after every validation (the checker already debounces edits).

import { el } from "./dom.js";

const COLORS = {
  weights: "#4e79a7", gradients: "#f28e2b", optimizer: "#e15759", activations: "#76b7b2", logits: "#59a14f",
  reference: "#edc948", lora: "#b07aa1", vllm: "#ff9da7", "kv cache": "#9c755f", "gathered weights": "#bab0ac",
  "log-prob pass": "#8cd17d", "autocast copies": "#d4a6c8", "generation logits": "#86bcb6", framework: "#79706e",
};

const gib = (bytes) => (bytes / 2 ** 30).toFixed(1);

// Styles through the CSSOM: the page's Content-Security-Policy refuses style attributes.
function styled(node, styles) {
  Object.assign(node.style, styles);
  return node;
}

export class MemoryBar {
  constructor({ root, getConfig, getOptions }) {
    Object.assign(this, { root, getConfig, getOptions });
    this.controller = null;
    this.input = el("input", { id: "hardware", type: "text", value: "8xH100-80GB", autocomplete: "off",
                               spellcheck: "false", "aria-describedby": "memory-summary" });
    this.summary = el("p", { id: "memory-summary", class: "muted", "aria-live": "polite" });
    this.bar = el("div", { id: "memory-bar", class: "memory-bar", role: "img" });
    this.legend = el("ul", { id: "memory-legend", class: "memory-legend" });
    root.replaceChildren(
      el("div", { class: "inline-field" }, [el("label", { for: "hardware", text: "Hardware (e.g. 8xH100-80GB)" }),
                                             this.input]),
      this.bar, this.summary, this.legend);
    this.input.addEventListener("input", () => { clearTimeout(this.timer); this.timer = setTimeout(() => this.refresh(), 300); });
  }

  async refresh() {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const q = new URLSearchParams({ hardware: this.input.value.trim() || "8xH100-80GB" });
    const { worldSize, profile } = this.getOptions();
    if (worldSize) q.set("world_size", worldSize);
    if (profile) q.set("profile", profile);
    try {
      const response = await fetch(`/api/v1/plan?${q}`, { method: "POST", signal: controller.signal,
        headers: { "Content-Type": "application/json" }, body: JSON.stringify(this.getConfig()) });
      const doc = await response.json();
      if (controller === this.controller) this.draw(response.ok ? doc : null, response.ok ? null : doc.detail);
    } catch (exc) {
      if (exc.name !== "AbortError") this.draw(null, exc.message);
    }
  }

  draw(doc, error) {
    const perGpu = doc?.per_gpu;
    this.root.dataset.fits = doc ? String(doc.fits) : "unknown";
    if (!perGpu) {
      const info = doc?.diagnostics?.[0]?.message;
      this.bar.replaceChildren();
      this.legend.replaceChildren();
      this.summary.textContent = error ? `No estimate: ${error}` : `No estimate${info ? `: ${info}` : ""}`;
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
    const verdict = doc.fits ? "fits" : `does not fit (${gib(perGpu.total_bytes - capacity)} GiB short)`;
    const time = doc.time?.step_seconds ? `; about ${doc.time.step_seconds.toFixed(1)} s a step` : "";
    this.summary.textContent = `${gib(perGpu.total_bytes)} of ${gib(capacity)} GiB per GPU: ${verdict}${time}`;
    this.legend.replaceChildren(...parts.map((p) => el("li", {}, [
      styled(el("span", { class: "swatch" }), { background: COLORS[p.name] || "#999" }),
      el("span", { text: `${p.name} ${gib(p.bytes)} GiB` })])));
  }
}

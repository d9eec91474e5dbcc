// "Run it on a cluster": in the Launch dialog, the SkyPilot task, dstack task or Kubernetes manifest of the config
// in the form, from POST /api/v1/emit (the text `grpo launch --emit TARGET FILE` prints: the same layout of nodes,
// processes, rendezvous, vLLM server node, checkpoint volume and resume). Nothing is submitted and no token is
// needed; the spec is shown with its layout, to copy or download, and a config the layout refuses shows why.

import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);
const EXTENSION = { skypilot: "sky.yaml", dstack: "dstack.yml", kubernetes: "k8s.yaml" };

// hooks: { config(), worldSize(), profile(), hardware(), diags (DiagnosticsView), onConfigChange(listener) }
export function setupEmit(hooks) {
  const target = $("emit-target");
  const form = $("emit-k8s-form");
  const file = $("emit-file");
  const output = $("emit-text");
  const layout = $("emit-layout");
  const problems = $("emit-diagnostics");
  if (!target) return;
  let shown = null; // the spec on show: { text, name }

  const clear = () => {
    shown = null;
    output.hidden = true;
    output.textContent = "";
    layout.textContent = "";
    problems.replaceChildren();
    $("emit-copy").disabled = $("emit-download").disabled = true;
  };
  const showForm = () => { $("emit-k8s-form-row").hidden = target.value !== "kubernetes"; };
  target.addEventListener("change", () => { showForm(); clear(); });
  form.addEventListener("change", clear);
  hooks.onConfigChange?.(clear);
  showForm();

  $("emit-apply").addEventListener("click", async () => {
    clear();
    const q = new URLSearchParams({ target: target.value, file: file.value.trim() || "config.yaml" });
    if (target.value === "kubernetes") q.set("k8s_form", form.value);
    const worldSize = hooks.worldSize();
    if (worldSize) q.set("world_size", worldSize);
    const profile = hooks.profile?.();
    if (profile) q.set("profile", profile);
    const hardware = hooks.hardware?.();
    if (hardware) q.set("hardware", hardware);
    layout.textContent = "Writing the spec…";
    try {
      const response = await fetch(`/api/v1/emit?${q}`, {
        method: "POST", body: JSON.stringify(hooks.config()), headers: { "Content-Type": "application/json" } });
      if (!response.ok) return refused(response);
      const text = await response.text();
      shown = { text, name: `${(file.value.trim() || "config.yaml").replace(/\.(ya?ml|json)$/, "")}.${EXTENSION[target.value]}` };
      layout.textContent = `${response.headers.get("X-Grpo-Layout")}. Save the config as ${q.get("file")} in the ` +
        "project folder the spec runs from.";
      output.textContent = text;
      output.hidden = false;
      $("emit-copy").disabled = $("emit-download").disabled = false;
    } catch (error) {
      layout.textContent = `The service cannot be reached (${error.message}); your config is kept in this browser.`;
    }
  });

  const refused = async (response) => {
    let body = null;
    try { body = await response.json(); } catch { /* not JSON */ }
    const errors = (body?.diagnostics || []).filter((d) => d.severity === "error");
    layout.textContent = errors.length ? `No spec: the config is not valid at world size ${body.world_size}:`
      : `No spec: ${typeof body?.detail === "string" ? body.detail : response.statusText}`;
    problems.replaceChildren(...errors.slice(0, 20).map((d) => el("li", {}, hooks.diags.diagNode(d))));
  };

  $("emit-copy").addEventListener("click", async () => {
    if (!shown) return;
    try {
      await navigator.clipboard.writeText(shown.text);
      layout.textContent = layout.textContent.replace(/ Copied\.$/, "") + " Copied.";
    } catch { // no clipboard (an http page on another host): select the text instead
      getSelection().selectAllChildren(output);
    }
  });
  $("emit-download").addEventListener("click", () => {
    if (!shown) return;
    const url = URL.createObjectURL(new Blob([shown.text], { type: "application/yaml" }));
    const link = el("a", { href: url, download: shown.name });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });
}

// Import (paste or file), export (download or copy) and presets. YAML is read and written by the server, so the
// form never needs a YAML library and the text matches what the CLI reads.

import * as api from "./api.js";
import { el } from "./dom.js";

const $ = (id) => document.getElementById(id);

export function setupImport(onImported) {
  const dialog = $("import-dialog");
  const error = $("import-error");
  $("import-open").addEventListener("click", () => { error.textContent = ""; dialog.showModal(); });
  $("import-cancel").addEventListener("click", () => dialog.close());
  $("import-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (file) $("import-text").value = await file.text();
  });
  $("import-apply").addEventListener("click", async () => {
    error.textContent = "";
    try {
      const loaded = await api.loadFile($("import-text").value);
      if (loaded.config === null) {
        const first = loaded.diagnostics[0];
        error.textContent = first ? `${first.message}${first.line ? ` (line ${first.line})` : ""}` : "no config found";
        return;
      }
      onImported(loaded.config, loaded.diagnostics);
      dialog.close();
    } catch (exc) {
      error.textContent = `could not import: ${exc.message}`;
    }
  });
}

function download(text, name) {
  const url = URL.createObjectURL(new Blob([text], { type: "application/yaml" }));
  const link = el("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function copy(text, textarea) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    textarea.select(); // the clipboard API needs permission; the old way still works from a click
    document.execCommand("copy");
  }
}

export function setupExport(currentConfig, currentProfile) {
  const dialog = $("export-dialog");
  const text = $("export-text");
  const note = $("export-note");
  $("export-open").addEventListener("click", async () => {
    note.textContent = "";
    text.value = "";
    dialog.showModal();
    try {
      text.value = await api.toYaml(currentConfig(), currentProfile());
    } catch (exc) {
      note.textContent = `could not export: ${exc.message}`;
    }
  });
  $("export-close").addEventListener("click", () => dialog.close());
  $("export-download").addEventListener("click", () => { download(text.value, "grpo-config.yaml"); note.textContent = "Downloaded grpo-config.yaml"; });
  $("export-copy").addEventListener("click", async () => { await copy(text.value, text); note.textContent = "Copied to the clipboard"; });
}

export async function setupPresets(onPreset) {
  const select = $("preset");
  for (const preset of await api.getJSON("/api/v1/presets")) {
    select.append(el("option", { value: preset.name, text: preset.title, title: preset.description }));
  }
  select.addEventListener("change", async () => {
    if (!select.value) return;
    const preset = await api.getJSON(`/api/v1/presets/${encodeURIComponent(select.value)}`);
    onPreset(preset);
  });
}

// Import (paste or file), export (download or copy) and recipes ("Start from"). With the server up, YAML is read
// and written by the server, so the text matches what the CLI reads and an imported file keeps its comments;
// without it, the export is written by the form itself (yamlwrite.js) and says so.

import * as api from "./api.js";
import { ask, el } from "./dom.js";
import { toYaml, withWorldSize } from "./yamlwrite.js";

const $ = (id) => document.getElementById(id);

// hooks.onImported(config, diagnostics, text, profiles, settings, what): `profiles` are those whose keys or reward
// names the file uses, `settings` what its `# grpo:` comment declares, `what` what the notice calls the text. The dialog asks before replacing a config that has
// settings, as a recipe does: it says what will be replaced and its button says "Replace"; Undo follows.
export function setupImport(hooks) {
  const dialog = $("import-dialog");
  const error = $("import-error");
  const warning = $("import-replaces");
  $("import-open").addEventListener("click", () => {
    error.textContent = "";
    const count = hooks.settingsCount();
    warning.hidden = count === 0;
    warning.textContent = count ? `Importing replaces the ${count} setting${count === 1 ? "" : "s"} in the form ` +
      "(and takes the file's world size). You can undo it right after." : "";
    $("import-apply").textContent = count ? "Replace my config" : "Import";
    dialog.showModal();
  });
  $("import-cancel").addEventListener("click", () => dialog.close());
  $("import-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (file) $("import-text").value = await file.text();
  });
  $("import-apply").addEventListener("click", async () => {
    error.textContent = "";
    try {
      const why = await importText($("import-text").value);
      if (why) { error.textContent = why; return; }
      dialog.close();
    } catch (exc) {
      error.textContent = api.unreachable(exc) ? "could not import: the server is unreachable (importing reads " +
        "the file with the validator's own YAML loader); try again when it is back" : `could not import: ${exc.message}`;
    }
  });
  // Read a file's text as the validator does and put it in the form (`what`: what the notice calls it). Returns
  // why nothing was imported, or "".
  async function importText(text, what) {
    const loaded = await api.loadFile(text);
    // The card changes after the import, so that the import's Undo knows what it showed before.
    if (loaded.dialect === "verl") { // the card says why when there is no TRL equivalent
      if (loaded.config) hooks.onImported(loaded.config, [], loaded.trl_yaml, [], null, what ?? "a verl run as TRL");
      hooks.onVerl(loaded);
      return "";
    }
    if (loaded.config === null) {
      const first = loaded.diagnostics[0];
      return first ? `${first.message}${first.line ? ` (line ${first.line})` : ""}` : "no config found";
    }
    const isJson = text.trimStart().startsWith("{");
    hooks.onImported(loaded.config, loaded.diagnostics, isJson ? null : text, loaded.profiles || [],
                     loaded.settings || null, what);
    hooks.onVerl(null);
    return "";
  }
  return { importText };
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

// current(): { state, profile, worldSize }
export function setupExport(current) {
  const dialog = $("export-dialog");
  const text = $("export-text");
  const note = $("export-note");
  const notes = $("export-notes");
  const writeWorld = $("export-world-size");
  const dialect = $("export-dialect");
  const render = async () => {
    const { state, profile, worldSize, schemaId, verdict } = current();
    note.textContent = "";
    const request = { config: state.toObject(), source: state.source, renames: state.renames,
                      world_size: worldSize ?? null, write_world_size: writeWorld.checked,
                      source_kind: state.origin?.kind === "recipe" ? "recipe" : "file",
                      source_name: state.origin?.kind === "recipe" ? state.origin.title ?? null : null };
    $("export-world-row").hidden = !worldSize;
    writeWorld.nextElementSibling.textContent = `Write the toolbar's world size ${worldSize ?? ""} as num_processes`;
    let answer;
    const verl = dialect.value === "verl";
    nameDialect(verl);
    try {
      answer = verl ? await verlAnswer(request) : await api.exportYaml(request, profile);
      dialog.dataset.mode = "server";
    } catch (exc) {
      if (!api.unreachable(exc)) { note.textContent = `could not export: ${exc.message}`; return; }
      if (verl) { text.value = ""; note.textContent = "converting to verl needs the server: export again when it is back"; return; }
      const [config, worldNotes] = withWorldSize(request.config, worldSize, writeWorld.checked);
      const modeline = schemaId ? `# yaml-language-server: $schema=${schemaId}\n` : "";
      answer = { yaml: modeline + toYaml(config), notes: ["The server is unreachable: this YAML was written by the form. " +
        (state.source ? "The imported file's comments are not kept; export again when the server is back to keep them."
          : "Check it with grpo validate when the server is back."), ...worldNotes] };
      dialog.dataset.mode = "offline";
    }
    text.value = answer.yaml;
    // an invalid config is written as it is (to be fixed elsewhere), never without a word: the first note says so
    const errors = verdict?.errors || 0;
    const invalid = errors && text.value ? [el("li", { class: "warn", id: "export-invalid", text: `This config is ` +
      `NOT valid: ${errors} error${errors === 1 ? "" : "s"} at world size ${verdict.worldSize ?? 1} (see ` +
      "Diagnostics); grpo validate reports them, and a run of it is refused." })] : [];
    notes.replaceChildren(...invalid, ...answer.notes.map((n) => el("li", { text: n,
      class: /NOT in this file|unreachable|could not be kept|No verl script/.test(n) ? "warn" : "" })));
  };
  $("export-open").addEventListener("click", () => { text.value = ""; dialog.showModal(); render(); });
  writeWorld.addEventListener("change", render);
  dialect.addEventListener("change", render);
  $("export-close").addEventListener("click", () => dialog.close());
  $("export-download").addEventListener("click", () => {
    const name = dialect.value === "verl" ? "run_verl.sh" : "grpo-config.yaml";
    download(text.value, name);
    note.textContent = `Downloaded ${name}`;
  });
  $("export-copy").addEventListener("click", async () => { await copy(text.value, text); note.textContent = "Copied to the clipboard"; });
}

// The dialog's title and text box say which dialect they hold (the title is the dialog's accessible name).
function nameDialect(verl) {
  $("export-title").textContent = verl ? "Export a verl launch script" : "Export TRL YAML";
  $("export-text-label").replaceChildren(...(verl
    ? ["The config as a verl launch script, for ", el("code", { text: "python3 -m verl.trainer.main_ppo" }),
       " where verl is installed (as ", el("code", { text: "grpo convert --to verl" }), " writes it)"]
    : ["The config, ready for ", el("code", { text: "trl grpo --config" }),
       " and for editors (schema modeline on the first line)"]));
}

// The form's config as a verl launch script (`grpo convert --to verl`): the lossy mappings as notes, or why not.
async function verlAnswer(request) {
  const converted = await api.convertToVerl({ config: request.config, to: "verl", world_size: request.world_size });
  if (converted.refused) return { yaml: "", notes: [`No verl script: ${converted.refused}`] };
  return { yaml: converted.text, notes: [`verl launch script at world size ${converted.world_size} ` +
    "(trainer.n_gpus_per_node); run it where verl is installed.", ...converted.lossy.map((l) => `lossy: ${l}`)] };
}

// Recipes: asks before replacing a config that has settings, offers Undo, and adapts the recipe to the active
// profile (the server maps reward names to the profile's registry and says so). A recipe is applied by an
// explicit action only: picking it with the mouse, Enter on the select, or the Apply button. Moving through the
// choices with the arrow keys only shows them (the select would otherwise apply each recipe it passes). After
// that the select shows the recipe the config came from.
// hooks: { state, profile(), onPreset(preset) -> {say, undo()} | null, onUndo(snapshot), announce(node) }
export async function setupPresets(hooks) {
  const select = $("preset");
  const apply = $("preset-apply");
  let browsing = false;
  const applied = () => (hooks.state.origin?.kind === "recipe" ? hooks.state.origin.name : "");
  const sync = () => {
    if ([...select.options].some((o) => o.value === applied())) select.value = applied();
    apply.disabled = !select.value;
    apply.textContent = select.value && select.value === applied() ? "Apply again" : "Apply";
  };
  const load = async () => {
    try {
      for (const preset of await api.getJSON("/api/v1/presets")) {
        select.append(el("option", { value: preset.name, text: preset.title, title: preset.description }));
      }
    } catch { select.title = "recipes need the server; they come back when it answers"; }
    sync();
  };
  const run = async () => {
    const name = select.value;
    const title = select.selectedOptions[0]?.text;
    if (!name) return;
    const count = hooks.state.values.size;
    if (count && !(await ask({ title: `Start from ${title}?`, confirm: "Replace", cancel: "Keep my config",
      text: `This replaces the ${count} setting${count === 1 ? "" : "s"} you have with the recipe. ` +
        "You can undo it right after." }))) { sync(); return; }
    const profile = hooks.profile();
    let preset;
    try {
      preset = await api.getJSON(`/api/v1/presets/${encodeURIComponent(name)}` +
        (profile ? `?profile=${encodeURIComponent(profile)}` : ""));
    } catch (exc) {
      hooks.announce(el("span", { text: `Could not load the recipe: ${exc.message}` }));
      sync();
      return;
    }
    const before = hooks.state.snapshot();
    const taken = hooks.onPreset({ ...preset, name, title }); // what else it changed: {say, undo()} or null
    sync();
    const undo = el("button", { type: "button", id: "undo-preset", text: "Undo",
      onclick: () => { hooks.onUndo(before); taken?.undo(); sync(); hooks.announce(el("span", { text: `Back to your config from before ${title}.` })); } });
    hooks.announce(el("span", {}, `Started from ${title}${profile ? ` (for ${profile})` : ""}. `,
      ...(preset.notes || []).map((n) => el("span", { class: "muted", text: `${n}. ` })),
      taken ? el("span", { id: "hardware-taken", text: taken.say }) : "", undo));
  };
  const NAVIGATION = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"];
  select.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && select.value && select.value !== applied()) { event.preventDefault(); run(); return; }
    browsing = NAVIGATION.includes(event.key) || event.key.length === 1; // type-ahead moves the choice too
  });
  select.addEventListener("keyup", () => { browsing = false; });
  select.addEventListener("blur", () => { browsing = false; });
  select.addEventListener("change", () => {
    apply.disabled = !select.value;
    apply.textContent = select.value && select.value === applied() ? "Apply again" : "Apply";
    if (browsing) {
      const title = select.selectedOptions[0]?.text;
      if (select.value) hooks.announce(el("span", { text: `${title}: press Enter or Apply to start from it.` }));
      return;
    }
    run();
  });
  apply.addEventListener("click", run);
  hooks.state.onChange((keys, source) => { if (["import", "preset", "undo", "restore"].includes(source)) sync(); });
  await load();
}

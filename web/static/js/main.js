// Boot: fetch the schema, build the form from it, bring back the draft, wire the toolbar, and validate once. The
// page marks itself ready (body[data-ready], window.grpoMetrics.readyAt) when the first validation is drawn.
// Every change is kept in the browser (persist.js), so reload and navigation never lose work.

import * as api from "./api.js";
import { Checker } from "./checker.js";
import { renderDerived, renderTimeline } from "./derived.js";
import { DiagnosticsView } from "./diagnostics.js";
import { count, el, onCommittedChange } from "./dom.js";
import { sectionsFromSchema } from "./fields.js";
import { setupExport, setupImport, setupPresets } from "./files.js";
import { showVerlCard, verlCardState } from "./verl.js";
import { setupLaunch } from "./launch.js";
import { MemoryBar } from "./memory.js";
import { loadDraft, rememberValue, saveDraft } from "./persist.js";
import { call, explainError } from "./runs-api.js";
import { ReleaseMove } from "./release.js";
import { loadLocal, setupTools, suggestions } from "./tools.js";
import { FormView } from "./sections.js";
import { ConfigState } from "./state.js";

const $ = (id) => document.getElementById(id);
const metrics = (window.grpoMetrics = { readyAt: null, validations: [] });
const FIRST_OPEN = ["model", "batch"];
const schemas = new Map(); // profile -> schema; a failed request is forgotten, so it is asked again
const rewardNames = new Map(); // release -> its script's reward names, kept the same way

// A positive whole number from an optional input, else undefined (and the input is marked invalid).
// A number typed in the toolbar or the schedule panel: a whole number from 1 to max, else not used, and the line
// beside it (INPUT-error) says so, rather than a verdict "at world size 1" that silently drops what was typed.
function positiveOption(input, max = Number.MAX_SAFE_INTEGER) {
  const text = input.value.trim();
  const value = Number(text);
  const ok = text === "" || (Number.isInteger(value) && value >= 1 && value <= max);
  input.setAttribute("aria-invalid", ok ? "false" : "true");
  const error = document.getElementById(`${input.id}-error`);
  if (error) {
    error.hidden = ok;
    error.textContent = ok ? "" : `${JSON.stringify(text)} is not a whole number ` +
      `${max === Number.MAX_SAFE_INTEGER ? "of 1 or more" : `from 1 to ${max}`}: not used until it is one`;
  }
  return ok && text !== "" ? value : undefined;
}

const profileName = () => $("profile").value || undefined;
const trlVersion = () => $("trl-version").value || undefined;
const worldSize = () => positiveOption($("world-size"), 4096);
// The values the model and dataset pickers remember: committed ones only (change, blur, launch), never each
// keystroke of a name being typed.
const REMEMBERED = ["model_name_or_path", "dataset_name"];

function schemaFor(profile, release) {
  const key = `${profile || ""} ${release || ""}`;
  if (!schemas.has(key)) {
    const q = new URLSearchParams();
    if (profile) q.set("profile", profile);
    if (release) q.set("trl_version", release);
    const url = `/api/v1/schema${q.toString() ? `?${q}` : ""}`;
    schemas.set(key, api.getJSON(url).catch((exc) => { schemas.delete(key); throw exc; }));
  }
  return schemas.get(key);
}

// The reward names the release's `trl grpo` resolves (the reward_funcs picker), asked once per release.
function rewardsFor(release) {
  const key = release || "";
  if (!rewardNames.has(key)) {
    const url = `/api/v1/rewards${release ? `?trl_version=${encodeURIComponent(release)}` : ""}`;
    rewardNames.set(key, api.getJSON(url).catch((exc) => { rewardNames.delete(key); throw exc; }));
  }
  return rewardNames.get(key);
}

function currentFilter() {
  return { query: $("search").value, onlyChanged: $("only-changed").checked };
}

// The form for the active profile's schema (a profile adds its script keys as a section).
async function buildForm(app) {
  const [schema, names] = await Promise.all([schemaFor(profileName(), trlVersion()),
                                             rewardsFor(trlVersion()).catch(() => app.trlRewards || [])]);
  app.trlRewards = names;
  app.trlRelease = trlVersion();
  const sections = sectionsFromSchema(schema);
  // The offline export's modeline: the schema file by its name, as the server writes it (relative to the YAML).
  const profile = profileName();
  app.schemaId = typeof schema.$id === "string" ? schema.$id
    : profile ? `grpo-config.${profile}.schema.json` : "grpo-config.schema.json";
  const opened = app.form ? app.form.sections.filter((s) => s.node.open).map((s) => s.id) : FIRST_OPEN;
  app.form = new FormView($("sections"), sections, app.state, currentFilter(), (field) => suggestions(app, field));
  app.form.onFiltered = (shown, active) => { $("filter-count").textContent = active ? count(shown, "matching field") : ""; };
  for (const s of app.form.sections) if (opened.includes(s.id)) s.node.open = true;
  app.form.applyVisibility();
  app.form.updateCounts();
  if (app.diags) app.diags.setForm(app.form);
}

// A config that declares its own hardware (a hardware: section, a # grpo: --hardware comment) takes the memory panel
// over what was typed there: the typed value goes, and the notice says so; its undo() brings the typed value back.
function yieldTypedHardware(app, config, settings) {
  const typed = $("hardware").value.trim();
  const own = settings?.hardware ?? config?.hardware;
  if (!typed || own === undefined || own === null) return null;
  app.memory.setTyped("");
  const spec = typeof own === "string" ? own : own.spec ?? "its hardware: section";
  return { say: `Its hardware (${spec}) replaces the ${typed} typed in the memory panel. `,
           undo: () => app.memory.setTyped(typed) };
}

// A recipe that declares its world size (num_processes, a # grpo: --world-size comment) takes the toolbar over what
// was typed there, as an import does: the typed value goes, and the notice says so; its undo() brings it back.
function yieldTypedWorldSize(config, settings) {
  const typed = $("world-size").value.trim();
  const own = settings?.world_size ?? config?.num_processes;
  if (!typed || !Number.isInteger(own) || String(own) === typed) return null;
  $("world-size").value = "";
  return { say: `Its world size (${own}) replaces the ${typed} typed in the toolbar. `,
           undo: () => { $("world-size").value = typed; } };
}

// What a recipe or import took over from what was typed, as one {say, undo()} (or null: nothing).
function joinTaken(...taken) {
  const found = taken.filter(Boolean);
  return found.length ? { say: found.map((t) => t.say).join(""), undo: () => found.forEach((t) => t.undo()) } : null;
}

// A short message above the diagnostics (recipe started, profile detected, draft restored), with its buttons.
function announce(node) {
  const notice = $("notice");
  const pressed = notice.contains(document.activeElement); // a button of the notice (Undo, an offer) was used
  notice.replaceChildren(...(node ? [node] : []));  // (a null would be written as the text "null")
  notice.hidden = !node;
  // that button went with the old notice: the focus stays on what the notice says now (or, with no notice left,
  // goes to the fields), never dropped to the page's start
  if (pressed) (node ? notice : $("sections")).focus();
}

// Everything drawn from the server's last answer: the schedule, its notes and world sizes, the memory estimate.
const DERIVED_PANELS = ["derived", "timeline", "derived-notes", "memory-panel"];

// Offline, the panels keep their last drawing, marked stale (with a note, and their buttons off) like the
// diagnostics; the next answer clears the marks.
function markDerivedStale(stale) {
  for (const id of DERIVED_PANELS) {
    $(id).dataset.stale = String(stale);
    $(id).classList.toggle("stale", stale);
    $(id).querySelectorAll("button").forEach((b) => { b.disabled = stale; });
  }
  $("derived-stale").hidden = !stale;
  $("memory-stale").hidden = !stale;
}

function showResult(app, result, error, { offline } = {}) {
  if (error) {
    if (offline) {
      app.diags.markStale(true, "The server is unreachable: the diagnostics below are stale (from an earlier " +
        "version of the config) and their fixes are off. Editing and Export still work; retrying…");
      markDerivedStale(true);
      document.body.dataset.offline = "true";
      return;
    }
    $("status").className = "status bad";
    $("status").textContent = `Could not validate: ${error.message}`;
    return;
  }
  delete document.body.dataset.offline;
  markDerivedStale(false);
  window.grpoLastResult = result; // read by the browser tests and handy in the console
  showJudgedRelease(result);
  app.diags.show(result);
  app.releaseMove.offerForKeys(result);
  renderDerived($("derived"), $("derived-notes"), result, (n) => app.setWorldSize(n), (d) => app.diags.diagNode(d));
  renderTimeline($("timeline"), result);
  app.memory?.refresh();
}

// The header names the release the last check judged the config for (the engine's choice, with where it came from).
const RELEASE_SOURCES = { flag: "the release picker", form: "the release picker",
                          comment: "the file's # grpo: --trl-version comment" };
function showJudgedRelease(result) {
  if (!result?.trl_version) return;
  const where = RELEASE_SOURCES[result.trl_version_source] || `the service's default (${result.trl_version_source})`;
  $("judged-release").textContent = `TRL ${result.trl_version}`;
  $("judged-release").title = `judged as TRL ${result.trl_version}: ${where}`;
}

function draftOf(app) {
  return { ...app.state.snapshot(), worldSize: $("world-size").value, profile: $("profile").value,
           datasetSize: $("dataset-size").value, trlVersion: $("trl-version").value,
           hardware: $("hardware")?.value ?? app.pendingHardware ?? "" };
}

// The world size the config is checked at, as `grpo validate` picks it for the file: the toolbar's (a flag),
// else the file's `# grpo: --world-size N` comment, else num_processes in the config (the server reads that).
function effectiveWorldSize(app) {
  return worldSize() ?? app.state.fileSettings?.world_size ?? undefined;
}

// The toolbar's placeholder shows what an empty world size means for this config; its description says where
// that number comes from.
function showWorldSizeSource(app) {
  const commented = app.state.fileSettings?.world_size;
  const declared = app.state.get("num_processes");
  const [value, where] = commented ? [commented, "the file's # grpo: --world-size comment"]
    : Number.isInteger(declared) ? [declared, "num_processes in the config"] : [1, "nothing declares one"];
  $("world-size").placeholder = String(value);
  $("world-size").title = `empty: ${value} (${where})`;
  $("world-size-help").textContent = `Training processes over all machines; empty: ${value}, from ${where}`;
}

// The settings a file's `# grpo:` comment declares, taken by the form's own controls: its profile and TRL release
// (when the form knows them). The world size and hardware are read from the state where they are needed.
function takeFileSettings(settings) {
  if (!settings) return false;
  let changed = false;
  const profile = settings.profiles?.[0];
  if (profile && profile !== $("profile").value && [...$("profile").options].some((o) => o.value === profile)) {
    $("profile").value = profile;
    changed = true;
  }
  const release = settings.trl_version;
  if (release && release !== $("trl-version").value && [...$("trl-version").options].some((o) => o.value === release)) {
    $("trl-version").value = release;
    changed = true;
  }
  return changed;
}

async function setProfile(app, name) {
  const previous = app.profile || ""; // the select shows the new choice already
  $("profile").value = name || "";
  app.save(); // at once: a reload while the schema is on its way keeps the choice
  try {
    await buildForm(app);
  } catch (exc) {
    $("profile").value = previous;
    app.save();
    app.checker.run();
    announce(el("span", { text: `Could not load the ${name || "default"} schema: ${exc.message}` }));
    return;
  }
  app.profile = name || "";
  withdrawOffer(name);
  app.checker.run();
}

// The notice's "Use the NAME profile" offer is done with once that profile is in use, whichever button or select
// applied it; the rest of the notice (the import and its Undo) stays.
function withdrawOffer(name) {
  if (!name) return;
  document.getElementById(`use-profile-${name}`)?.closest(".offer")?.remove();
  if (!$("notice").textContent.trim()) announce(null);
}

// The profiles a file uses, as a button each (the validator's own CLI flag is --profile NAME); `keep`: added to
// what the notice says already. An offer, not the page's primary button (Export stays the one).
function offerProfiles(app, found, keep = false) {
  const wanted = found.filter((p) => p.name !== profileName());
  if (!wanted.length) return;
  const previous = keep ? [...$("notice").childNodes] : [];
  announce(el("span", {}, ...previous, ...wanted.map((p) => el("span", { class: "offer" },
    `This file uses ${p.name}'s ${[p.keys.length ? `script keys (${p.keys.slice(0, 4).join(", ")})` : "",
      p.reward_funcs.length ? `reward names (${p.reward_funcs.join(", ")})` : ""].filter(Boolean).join(" and ")}. `,
    el("button", { type: "button", id: `use-profile-${p.name}`, text: `Use the ${p.name} profile`,
                   onclick: () => { announce(null); setProfile(app, p.name); } })))));
}

function wireControls(app) {
  $("search").addEventListener("input", () => app.form.setFilter(currentFilter()));
  $("only-changed").addEventListener("change", () => app.form.setFilter(currentFilter()));
  $("collapse-all").addEventListener("click", () => {
    document.querySelectorAll("details.section").forEach((d) => { d.open = false; });
  });
  for (const id of ["world-size", "dataset-size"]) {
    $(id).addEventListener("input", () => { app.save(); app.checker.schedule(); });
  }
  // A model or dataset name is remembered once it is committed: the field loses the focus or Enter is pressed
  // (the browser's change event), or a suggestion is picked.
  $("sections").addEventListener("change", (event) => {
    const key = REMEMBERED.find((k) => event.target.id === `in-${k}`);
    if (key) { rememberValue(key, app.state.get(key)); app.form.rows.get(key)?.refreshPicker?.(); }
  });
  onCommittedChange($("profile"), () => setProfile(app, $("profile").value));
  onCommittedChange($("trl-version"), async () => {  // the release's schema, then the offer to migrate forward
    const from = app.release;
    app.release = $("trl-version").value;
    await setProfile(app, $("profile").value);
    app.releaseMove.offer(from, app.release);
  });
  $("apply-safe").addEventListener("click", () => {
    for (const fix of app.diags.safeFixes()) app.state.applyFix(fix);
    // The button goes away with the fixes: the focus goes to the first diagnostic left (or the empty list's note).
    app.diags.pendingFocus = { index: 0 };
  });
  app.importer = setupImport({
    settingsCount: () => app.state.values.size,
    onVerl: showVerlCard,
    onImported: (config, notes, text, profiles, settings, what = "a file") => {
      const before = { snapshot: app.state.snapshot(), worldSize: $("world-size").value, profile: $("profile").value,
                       trlVersion: $("trl-version").value, verl: verlCardState() };
      const taken = yieldTypedHardware(app, config, settings);
      // The file's world size, not the toolbar's old one: empty means num_processes (or its # grpo: comment).
      $("world-size").value = "";
      app.state.replace(config, "import", text, {}, { origin: { kind: "file" }, fileSettings: settings || null,
                                                       fileNotes: notes });
      $("preset").value = "";
      app.form.refreshAll();
      const controls = takeFileSettings(settings);
      app.release = $("trl-version").value;
      if (controls) setProfile(app, $("profile").value);
      const count = Object.keys(config).length;
      const undo = el("button", { type: "button", id: "undo-import", text: "Undo", onclick: async () => {
        $("world-size").value = before.worldSize;
        const reload = before.profile !== $("profile").value || before.trlVersion !== $("trl-version").value;
        $("profile").value = before.profile;
        $("trl-version").value = before.trlVersion;
        app.release = before.trlVersion;
        taken?.undo();
        // The card of a verl file imported before this one comes back; else the card stays (the verl file's
        // diagnostics are still its answer), saying its conversion is no longer in the form.
        const card = before.verl.loaded ? before.verl : verlCardState();
        if (card.loaded) showVerlCard(card.loaded, { inForm: before.verl.loaded ? before.verl.inForm : false });
        app.state.restore(before.snapshot, "undo");
        app.form.refreshAll();
        if (reload) await setProfile(app, before.profile);
        else app.checker.run();
        announce(el("span", { text: "Back to your config from before the import." }));
      } });
      announce(el("span", {}, `Imported ${what} with ${count} setting${count === 1 ? "" : "s"}` +
        (settings?.world_size ? ` (world size ${settings.world_size} from its # grpo: comment)` : "") + ". ",
        taken ? el("span", { id: "hardware-taken", text: taken.say }) : "", undo));
      offerProfiles(app, profiles, true);
    },
  });
  setupExport(() => ({ state: app.state, profile: profileName(), worldSize: worldSize(), schemaId: app.schemaId,
                       verdict: app.diags.verdict }));
  setupLaunch({
    config: () => app.state.toObject(), worldSize: () => effectiveWorldSize(app), trlVersion, diags: app.diags,
    checker: app.checker, profile: profileName, runsOn: () => app.capabilities?.runs !== false,
    hardware: () => { // what the memory panel plans for, unless it is only its default
      const [spec, from] = app.memory.hardware();
      return from.startsWith("the default") ? undefined : spec ?? undefined;
    },
    onLaunched: (config) => { for (const key of REMEMBERED) rememberValue(key, config[key]); },
    onConfigChange: (listener) => {
      app.state.onChange(listener);
      $("world-size").addEventListener("input", listener);
    },
  });
  setupTools(app, { worldSize: () => effectiveWorldSize(app), profile: profileName, announce });
}

function restoreDraft(app, draft) {
  if (!draft) return;
  app.pendingHardware = draft.hardware || "";
  $("world-size").value = draft.worldSize || "";
  $("dataset-size").value = draft.datasetSize || "";
  if ([...$("profile").options].some((o) => o.value === draft.profile)) $("profile").value = draft.profile;
  if ([...$("trl-version").options].some((o) => o.value === draft.trlVersion)) $("trl-version").value = draft.trlVersion;
}

// The release picker: every table, the service's default named first.
function fillReleases(versions) {
  const { version, source, says } = versions.default;
  $("trl-version").options[0].textContent = `${version} (the service's: ${says || source})`;
  for (const release of [...versions.releases].reverse()) { // the default's own release is the first option already
    if (release !== version) $("trl-version").append(el("option", { value: release, text: release }));
  }
}

async function main() {
  const app = { state: new ConfigState() };
  window.grpoState = () => app.state.toObject();
  app.draft = () => draftOf(app); // what a saved config keeps: the settings and every control that judges them
  app.save = () => saveDraft(draftOf(app));
  app.setWorldSize = (n) => { $("world-size").value = String(n); app.save(); app.checker.run(); };
  const draft = loadDraft();
  schemaFor(draft?.profile || undefined, draft?.trlVersion || undefined); // fetch it while the profiles arrive
  const [profiles, capabilities, rewards, versions] = await Promise.all([
    api.getJSON("/api/v1/profiles"), api.getJSON("/api/v1/capabilities").catch(() => ({ runs: false })),
    rewardsFor(draft?.trlVersion || undefined).catch(() => []),
    api.getJSON("/api/v1/trl-versions").catch(() => ({ default: { version: "1.16.0", source: "default" }, releases: [] })),
    loadLocal(app)]);
  fillReleases(versions);
  Object.assign(app, { profiles, capabilities, trlRewards: rewards });
  for (const p of profiles) $("profile").append(el("option", { value: p.name, text: p.name, title: p.description }));
  restoreDraft(app, draft);
  app.profile = $("profile").value;
  app.release = $("trl-version").value;
  app.releaseMove = new ReleaseMove({ state: app.state, versions, profile: profileName, announce,
                                      refresh: () => app.form.refreshAll() });
  await buildForm(app);
  app.diags = new DiagnosticsView({
    form: app.form, list: $("diag-list"), status: $("status"), fileNotes: () => app.state.fileNotes,
    onFix: (fix) => {
      // A fix that declares the world size moves the toolbar's too, so both say the same.
      if (fix.set && Number.isInteger(fix.set.num_processes) && $("world-size").value) {
        $("world-size").value = String(fix.set.num_processes);
      }
      app.state.applyFix(fix);
    },
    onWorldSize: (n) => app.setWorldSize(n),
    onProfile: (name) => setProfile(app, name),
  });
  app.checker = new Checker({
    state: app.state, metrics,
    options: () => ({ worldSize: effectiveWorldSize(app), profile: profileName(),
                      datasetSize: positiveOption($("dataset-size")), launch: app.capabilities.runs,
                      trlVersion: trlVersion(), allowEnv: app.state.fileSettings?.allow_env,
                      hardware: app.state.fileSettings?.hardware }),
    onResult: (result, error, how) => showResult(app, result, error, how),
    onBusy: (busy) => document.body.classList.toggle("busy", busy),
  });
  app.state.onChange((keys, source) => {
    if (source === "input") metrics.lastEditAt = performance.now();
    app.form.update(keys, source);
    app.save();
    for (const key of REMEMBERED) {
      if (source === "pick" && keys.has(key)) { rememberValue(key, app.state.get(key)); app.form.rows.get(key)?.refreshPicker(); }
    }
    showWorldSizeSource(app);
    app.checker.schedule(source === "input" ? undefined : 0);
  });
  if (draft && draft.entries.length) {
    app.state.restore(draft, "restore");
    app.form.refreshAll();
    announce(el("span", { text: `Your config is back as you left it (${draft.entries.length} settings, kept in ` +
      "this browser)." }));
  }
  app.memory = new MemoryBar({ root: $("memory-panel"), getConfig: () => app.state.toObject(),
                               getOptions: () => ({ worldSize: effectiveWorldSize(app), profile: profileName(),
                                                    trlVersion: trlVersion(),
                                                    fileHardware: app.state.fileSettings?.hardware }),
                               hardware: app.pendingHardware || "", onChange: () => app.save(),
                               diagNode: (diag) => app.diags.diagNode(diag),
                               onVerdict: (memory) => app.diags.setMemory(memory) });
  showWorldSizeSource(app);
  wireControls(app);
  await Promise.all([
    setupPresets({
      state: app.state, profile: profileName, announce,
      onPreset: (preset) => {
        const taken = joinTaken(yieldTypedHardware(app, preset.config, preset.settings),
                                yieldTypedWorldSize(preset.config, preset.settings));
        app.state.replace(preset.config, "preset", preset.yaml, {},
                          { origin: { kind: "recipe", name: preset.name, title: preset.title },
                            fileSettings: preset.settings || null });
        app.form.refreshAll();
        return taken;
      },
      onUndo: (snapshot) => { app.state.restore(snapshot, "undo"); app.form.refreshAll(); },
    }),
    app.checker.run()]);
  metrics.readyAt = performance.now();
  document.body.dataset.ready = "true";
  openRunFromAddress(app);
}

// "Edit in the form" on the runs page opens /#edit-run=ID: the run's config comes into the form as an import (with
// Undo), at the run's world size, to be changed and launched again. The address loses the fragment at once.
async function openRunFromAddress(app) {
  const id = location.hash.match(/(?:^#|&)edit-run=([0-9a-f]{12})/)?.[1];
  if (!id) return;
  history.replaceState(null, "", location.pathname + location.search);
  try {
    const run = await call(`/${id}`);
    const why = await app.importer.importText(run.config, `run ${id}'s config`);
    if (why) throw new Error(why);
    const declared = app.state.get("num_processes");
    if (run.world_size !== (Number.isInteger(declared) ? declared : 1)) app.setWorldSize(run.world_size);
  } catch (error) {
    const why = error.status || error instanceof TypeError ? explainError(error) : error.message;
    announce(el("span", { class: "error-text", text: `Could not open run ${id}'s config: ${why}` }));
  }
}

main().catch((exc) => {
  $("status").className = "status bad";
  $("status").textContent = `The form could not start: ${exc.message}`;
});

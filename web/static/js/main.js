// Boot: fetch the schema, build the form from it, bring back the draft, wire the toolbar, and validate once. The
// page marks itself ready (body[data-ready], window.grpoMetrics.readyAt) when the first validation is drawn.
// Every change is kept in the browser (persist.js), so reload and navigation never lose work.

import * as api from "./api.js";
import { Checker } from "./checker.js";
import { renderDerived, renderTimeline } from "./derived.js";
import { DiagnosticsView } from "./diagnostics.js";
import { el, onCommittedChange } from "./dom.js";
import { openRunFromAddress } from "./editrun.js";
import { setupExport, setupImport, setupPresets } from "./files.js";
import {
  effectiveWorldSize, joinTaken, positiveOption, showWorldSizeSource, takeFileSettings, worldSize,
  yieldTypedHardware, yieldTypedWorldSize,
} from "./filesettings.js";
import { buildForm, currentFilter, offerProfiles, profileName, rewardsFor, schemaFor, setProfile, trlVersion }
  from "./formbuild.js";
import { showVerlCard, verlCardState } from "./verl.js";
import { setupLaunch } from "./launch.js";
import { MemoryBar } from "./memory.js";
import { announce } from "./notice.js";
import { loadDraft, rememberValue, saveDraft } from "./persist.js";
import { ReleaseMove } from "./release.js";
import { loadLocal, setupTools } from "./tools.js";
import { ConfigState } from "./state.js";

const $ = (id) => document.getElementById(id);
const metrics = (window.grpoMetrics = { readyAt: null, validations: [] });
// The values the model and dataset pickers remember: committed ones only (change, blur, launch), never each
// keystroke of a name being typed.
const REMEMBERED = ["model_name_or_path", "dataset_name"];

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
    fileHardware: () => app.state.fileSettings?.hardware,
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

main().catch((exc) => {
  $("status").className = "status bad";
  $("status").textContent = `The form could not start: ${exc.message}`;
});

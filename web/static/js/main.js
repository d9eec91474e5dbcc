// Boot: fetch the schema, build the form from it, wire the toolbar, and validate once. The page marks itself
// ready (body[data-ready], window.grpoMetrics.readyAt) when the first validation is drawn.

import * as api from "./api.js";
import { Checker } from "./checker.js";
import { renderDerived, renderTimeline } from "./derived.js";
import { DiagnosticsView } from "./diagnostics.js";
import { el } from "./dom.js";
import { sectionsFromSchema } from "./fields.js";
import { setupExport, setupImport, setupPresets } from "./files.js";
import { setupLaunch } from "./launch.js";
import { MemoryBar } from "./memory.js";
import { FormView } from "./sections.js";
import { ConfigState } from "./state.js";

const $ = (id) => document.getElementById(id);
const metrics = (window.grpoMetrics = { readyAt: null, validations: [] });
const FIRST_OPEN = ["model", "batch"];
const schemas = new Map(); // profile -> schema, fetched once each

// A positive whole number from an optional input, else undefined (and the input is marked invalid).
function positiveOption(input, max = Number.MAX_SAFE_INTEGER) {
  const text = input.value.trim();
  const value = Number(text);
  const ok = text === "" || (Number.isInteger(value) && value >= 1 && value <= max);
  input.setAttribute("aria-invalid", ok ? "false" : "true");
  return ok && text !== "" ? value : undefined;
}

const profileName = () => $("profile").value || undefined;

function schemaFor(profile) {
  if (!schemas.has(profile)) {
    schemas.set(profile, api.getJSON(`/api/v1/schema${profile ? `?profile=${encodeURIComponent(profile)}` : ""}`));
  }
  return schemas.get(profile);
}

function currentFilter() {
  return { query: $("search").value, onlyChanged: $("only-changed").checked };
}

// The form for the active profile's schema (a profile adds its script keys as a section).
async function buildForm(app) {
  const sections = sectionsFromSchema(await schemaFor(profileName()));
  const opened = app.form ? app.form.sections.filter((s) => s.node.open).map((s) => s.id) : FIRST_OPEN;
  app.form = new FormView($("sections"), sections, app.state, currentFilter());
  app.form.onFiltered = (shown, active) => { $("filter-count").textContent = active ? `${shown} matching fields` : ""; };
  for (const s of app.form.sections) if (opened.includes(s.id)) s.node.open = true;
  app.form.applyVisibility();
  app.form.updateCounts();
  if (app.diags) app.diags.setForm(app.form);
}

function showResult(app, result, error) {
  if (error) {
    $("status").className = "status bad";
    $("status").textContent = `Could not validate: ${error.message}`;
    return;
  }
  window.grpoLastResult = result; // read by the browser tests and handy in the console
  app.diags.show(result);
  renderDerived($("derived"), $("derived-notes"), result);
  renderTimeline($("timeline"), result);
  app.memory?.refresh();
}

function wireControls(app) {
  $("search").addEventListener("input", () => app.form.setFilter(currentFilter()));
  $("only-changed").addEventListener("change", () => app.form.setFilter(currentFilter()));
  $("collapse-all").addEventListener("click", () => {
    document.querySelectorAll("details.section").forEach((d) => { d.open = false; });
  });
  for (const id of ["world-size", "dataset-size"]) $(id).addEventListener("input", () => app.checker.schedule());
  $("profile").addEventListener("change", async () => { await buildForm(app); app.checker.run(); });
  const startFrom = (config, notes = []) => { app.diags.fileNotes = notes; app.state.replace(config); app.form.refreshAll(); };
  setupImport(startFrom);
  setupExport(() => app.state.toObject(), profileName);
  setupLaunch(() => app.state.toObject(), () => positiveOption($("world-size"), 4096));
  return startFrom;
}

async function main() {
  const app = { state: new ConfigState() };
  window.grpoState = () => app.state.toObject();
  schemaFor(undefined); // start fetching the schema while the profiles arrive
  const profiles = await api.getJSON("/api/v1/profiles");
  for (const p of profiles) $("profile").append(el("option", { value: p.name, text: p.name, title: p.description }));
  await buildForm(app);
  app.diags = new DiagnosticsView({ form: app.form, list: $("diag-list"), status: $("status"),
                                    onFix: (fix) => app.state.applyFix(fix) });
  app.checker = new Checker({
    state: app.state, metrics,
    options: () => ({ worldSize: positiveOption($("world-size"), 4096), profile: profileName(),
                      datasetSize: positiveOption($("dataset-size")) }),
    onResult: (result, error) => showResult(app, result, error),
    onBusy: (busy) => document.body.classList.toggle("busy", busy),
  });
  app.state.onChange((keys, source) => {
    if (source === "input") metrics.lastEditAt = performance.now();
    app.form.update(keys, source);
    app.checker.schedule(source === "input" ? undefined : 0);
  });
  app.memory = new MemoryBar({ root: $("memory-panel"), getConfig: () => app.state.toObject(),
                               getOptions: () => ({ worldSize: positiveOption($("world-size"), 4096),
                                                    profile: profileName() }) });
  const startFrom = wireControls(app);
  await Promise.all([setupPresets((preset) => startFrom(preset.config)), app.checker.run()]);
  metrics.readyAt = performance.now();
  document.body.dataset.ready = "true";
}

main().catch((exc) => {
  $("status").className = "status bad";
  $("status").textContent = `The form could not start: ${exc.message}`;
});

// The runs page: every run with its state and progress, and for the selected one a progress bar with an ETA,
// live charts (reward, loss, KL), the log tail, cancel (after asking, with the steps it would lose) and resume.
// It polls once a second and fetches only what is new: metrics after the last step seen, log bytes after the
// last offset. The list is a keyboard list: each row takes the focus, Enter or Space opens it, arrows move.
// Without a token it asks for one instead of calling the service.

import { lineChart, series } from "./chart.js";
import { ask, el } from "./dom.js";
import { call, explainError, getToken, refusedTokenText, setToken, takeTokenFromUrl } from "./runs-api.js";
import { refreshCompletions, resetCompletions, setupCompletions } from "./completions.js";
import { compareRuns } from "./compare.js";
import { findingMetrics, marksFor, refreshHealth, resetHealth } from "./health.js";

const $ = (id) => document.getElementById(id);
const CHARTS = ["reward", "loss", "kl"];
const LOG_KEEP = 256 * 1024; // characters of log kept in the page
const LOG_LINES = 400;
const ACTIVE = new Set(["queued", "running"]);
const RANGE_STEPS = 1000; // metrics are loaded this many steps at a time when a run is opened
let view = null; // the selected run: { id, metrics, lastStep, logOffset, logText, decoder, detail, missing }
const picked = new Set(); // runs ticked for the compare view

function selectedFromUrl() {
  const found = location.hash.match(/(?:^#|&)run=([0-9a-f]{12})/);
  return found ? found[1] : null;
}

// The address names the run shown: opening one adds a history entry (Back goes to the run before, not off the
// page); the first pick (from the address, or the newest run) replaces the entry instead.
function select(id, { push = false } = {}) {
  if (view && view.id === id) return;
  view = id ? { id, metrics: [], lastStep: null, logOffset: 0, logText: "", decoder: new TextDecoder(), loaded: false,
                loading: false } : null;
  if (id && selectedFromUrl() !== id) history[push ? "pushState" : "replaceState"](null, "", `/runs#run=${id}`);
  $("detail").hidden = true; // until the run's answer comes: never another run's facts under this one's address
  $("metrics-loading").hidden = true;
  $("log").textContent = "";
  $("charts").replaceChildren();
  resetCompletions(id);
  resetHealth(id);
  for (const [link, path] of [["dl-csv", "metrics.csv"], ["dl-jsonl", "metrics.jsonl"], ["dl-completions", "completions.jsonl"]]) {
    $(link).dataset.path = id ? `/${id}/${path}` : "";
  }
}

// Downloads need the token header, so they are fetched and handed to the browser as a file.
async function download(event) {
  event.preventDefault();
  const path = event.currentTarget.dataset.path;
  if (!path) return;
  try {
    const response = await call(path, { raw: true });
    const name = (response.headers.get("Content-Disposition") || "").match(/filename="([^"]+)"/)?.[1] || "download";
    const url = URL.createObjectURL(await response.blob());
    const link = el("a", { href: url, download: name });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (error) {
    notify(explainError(error));
  }
}

// What the user did and the service refused (a 409 on Resume or Cancel, a failed download), or an address naming no
// run: shown until dismissed, never cleared by the once-a-second refresh as the list's own status line is.
function notify(text) {
  $("notice-text").textContent = text;
  $("notice").hidden = false;
  $("notice-dismiss").focus({ preventScroll: true });
}

function dismiss() {
  $("notice").hidden = true;
  $("notice-text").textContent = "";
}

function updateCompare() {
  $("compare-open").disabled = picked.size < 2;
  $("compare-count").textContent = picked.size < 2 ? "tick two or more runs to compare them" : `${picked.size} runs ticked`;
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");
const short = (iso) => (iso ? new Date(iso).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit",
                                                                   minute: "2-digit" }) : "");
const num = (value) => (typeof value === "number" ? Number(value.toPrecision(3)).toString() : "");

export function duration(seconds) {
  if (seconds == null) return "";
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

// "step 12 of 200 (6%), about 3 min left"
export function progressText(run) {
  const p = run.progress || {};
  if (run.step == null) return p.total_steps ? `0 of ${p.total_steps} steps` : "no step logged yet";
  const of = p.total_steps ? ` of ${p.total_steps} (${Math.round((p.fraction || 0) * 100)}%)` : "";
  const eta = p.eta_seconds != null && ACTIVE.has(run.state) ? `, about ${duration(p.eta_seconds)} left` : "";
  return `step ${run.step}${of}${eta}`;
}

function progressCell(run) {
  const p = run.progress || {};
  if (!p.total_steps) return el("td", { text: run.step ?? "" });
  return el("td", { title: progressText(run) },
    el("progress", { max: "1", value: String(p.fraction || 0), "aria-label": progressText(run) }),
    el("span", { class: "pct", text: `${run.step ?? 0}/${p.total_steps}` }));
}

function open(id) { select(id, { push: true }); refresh(); }

// An edited address (#run=ID typed in), Back and Forward: show the run the address names.
function followAddress() {
  takeTokenFromUrl();
  const id = selectedFromUrl();
  if (id && id !== view?.id) { select(id); refresh(); }
}

function rowKeys(event, id) {
  const row = event.currentTarget;
  if (event.key === "Enter" || event.key === " ") { event.preventDefault(); open(id); }
  const next = event.key === "ArrowDown" ? row.nextElementSibling : event.key === "ArrowUp" ? row.previousElementSibling : null;
  if (next) { event.preventDefault(); next.focus(); }
}

function renderList(runs) {
  $("runs-empty").hidden = runs.length > 0;
  const focused = document.activeElement?.closest?.("tr[data-run-id]")?.dataset.runId;
  for (const id of [...picked]) if (!runs.some((run) => run.id === id)) picked.delete(id);
  $("runs-body").replaceChildren(...runs.map((run) => el("tr", {
    "data-run-id": run.id, "data-state": run.state, class: view && view.id === run.id ? "selected" : "",
    tabindex: "0", "aria-selected": String(Boolean(view && view.id === run.id)),
    "aria-label": `run ${run.id}, ${run.state}, ${progressText(run)}`,
    onclick: () => open(run.id), onkeydown: (event) => rowKeys(event, run.id),
  }, el("td", {}, el("input", { type: "checkbox", class: "pick", "aria-label": `compare run ${run.id}`,
      checked: picked.has(run.id), onclick: (event) => event.stopPropagation(),
      onkeydown: (event) => event.stopPropagation(),
      onchange: (event) => { if (event.target.checked) picked.add(run.id); else picked.delete(run.id); updateCompare(); } })),
     el("td", {}, el("code", { text: run.id })), el("td", {}, el("span", { class: `state ${run.state}`, text: run.state })),
     progressCell(run), el("td", { text: num(run.reward ?? run.latest?.reward) }), el("td", { text: short(run.created_at), title: when(run.created_at) }))));
  const pick = document.activeElement?.classList?.contains("pick") ? focused : null;
  if (pick) document.querySelector(`tr[data-run-id="${pick}"] input.pick`)?.focus();
  else if (focused) document.querySelector(`tr[data-run-id="${focused}"]`)?.focus();
}

// Where a run trains when it is not a local process: the scheduler's job id, its state and reason in its words.
export function schedulerFacts(run) {
  const job = run.job ?? (run.backend === "ray" ? run.ray : run.backend === "slurm" ? run.slurm : null);
  if (!job) return [];
  const name = { ray: "Ray", slurm: "Slurm" }[run.backend] ?? run.backend;
  return [["backend", run.backend], [`${name} job`, job.job_id || "not submitted yet"], [`${name} state`, job.state],
    [`${name} reason`, job.reason]];
}

function renderDetail(run) {
  $("detail").hidden = false;
  $("run-title").textContent = `Run ${run.id}`;
  const state = $("run-state");
  state.textContent = run.state + (run.cancel_requested && ACTIVE.has(run.state) ? " (cancelling…)" : "");
  state.className = `state ${run.state}`;
  state.dataset.state = run.state;
  const paths = Object.entries(run.resolved_paths || {}).map(([name, path]) => [name, path]);
  const facts = [...schedulerFacts(run), ["output_dir", run.output_dir], ...paths, ["world size", run.world_size],
    ["exit code", run.exit_code],
    ["reason", run.reason], ["error", run.error],
    ["replaced by", run.replaced_by && `run ${run.replaced_by} overwrote this run's output_dir: its checkpoints ` +
      "and model were deleted; its metrics, completions, health and log shown here are its own"],
    ["resumed from", run.resumed_from], ["resumed by", run.resumed_by && `run ${run.resumed_by} trains on in ` +
      "this output_dir: its checkpoints and completions are on its own page, not here"], ["started", when(run.started_at)],
    ["finished", when(run.finished_at)], ["checkpoints", run.checkpoints.join(", ")]];
  $("run-facts").replaceChildren(...facts.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => el("div", { class: k === "error" ? "fact error" : "fact", "data-fact": k },
      el("dt", { text: k }), el("dd", { text: String(v) }))));
  $("cancel").disabled = !ACTIVE.has(run.state) || run.cancel_requested;
  view.detail = run;
  const bar = $("run-progress");
  bar.hidden = !run.progress?.total_steps;
  bar.value = run.progress?.fraction || 0;
  $("run-progress-text").textContent = progressText(run);
  // Resume only where it trains something: the service says why not (no checkpoint, no step left: GRPO-A014).
  const resume = run.resume || { possible: false };
  $("resume").disabled = !resume.possible;
  $("resume").title = resume.possible ? `a new run from ${resume.checkpoint}, the last complete checkpoint`
    : resume.reason || "";
  $("resume-why").hidden = resume.possible || ACTIVE.has(run.state) || !resume.reason;
  $("resume-why").textContent = resume.reason ? `Resume is off: ${resume.reason}.` : "";
  // nothing left to train: going on is one click (max_steps raised in the resumed run's config), and so is a new
  // run from this config (Edit in the form), the first thing offered for a run that finished
  const more = $("resume-more");
  more.hidden = resume.possible || !resume.max_steps;
  more.textContent = resume.max_steps ? `Continue to step ${resume.max_steps}` : "";
  more.title = resume.max_steps ? `resume from ${resume.checkpoint} with max_steps ${resume.max_steps}: ` +
    `${resume.max_steps - resume.step} more steps in the same output_dir` : "";
  // resumed already: its line goes on in a newer run, which is the one to open (and resume)
  const newest = $("resume-newest");
  newest.hidden = !resume.instead;
  newest.textContent = resume.instead ? `Open run ${resume.instead} (newest of this line)` : "";
  newest.dataset.run = resume.instead || "";
  // one primary button, the next step: resume; else open the newest run of the line; else a new run from this
  // config (a running run has none: Cancel loses work, and nothing else is to be done but watch)
  const next = ACTIVE.has(run.state) ? null : resume.possible ? "resume" : resume.instead ? "resume-newest"
    : "edit-in-form";
  for (const id of ["resume", "resume-newest", "edit-in-form"]) $(id).classList.toggle("primary", id === next);
  $("config").textContent = run.config;
  renderCharts();
}

function renderCharts() {
  const names = CHARTS.filter((name) => name !== "kl" || view.metrics.some((r) => typeof r.kl === "number"));
  // a run-health finding is shown on its metric's chart, added when it is not one of the usual three
  for (const metric of findingMetrics()) if (!names.includes(metric) && series(view.metrics, metric).length) names.push(metric);
  $("charts").replaceChildren(...names.map((name) => lineChart(name, series(view.metrics, name), { marks: marksFor(name) })));
}

// Progress bars redraw one line with carriage returns: show what the line says last.
function renderLog() {
  const box = $("log");
  const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
  const lines = view.logText.split("\n").slice(-LOG_LINES).map((line) => line.slice(line.lastIndexOf("\r") + 1));
  box.textContent = lines.join("\n");
  if (atBottom) box.scrollTop = box.scrollHeight;
}

// A run the service does not have (an old or mistyped #run= address): said once, and not asked for again.
function runMissing(current, error) {
  current.missing = true;
  $("detail").hidden = true;
  notify(`There is no run ${current.id} on this service (${error.message}): the address names a run it does not ` +
    "have. Pick a run from the list.");
}

function addMetrics(current, records) {
  current.metrics.push(...records);
  for (const record of records) if (typeof record.step === "number") current.lastStep = Math.max(current.lastStep ?? 0, record.step);
}

// Opening a run: its summary first (state, progress, facts, resume: one small answer however long it ran), then
// its metrics RANGE_STEPS steps at a time, the charts drawn after each range, with a loading line meanwhile.
async function openRun(current) {
  current.loading = true;
  try {
    const run = await call(`/${current.id}?metrics=false`);
    if (view !== current) return;
    renderDetail(run);
    const last = run.step ?? 0;
    const status = $("metrics-loading");
    for (let done = -1; done < last; done += RANGE_STEPS) {
      status.hidden = false;
      status.textContent = `Loading metrics: steps ${Math.max(done + 1, 0)}-${Math.min(done + RANGE_STEPS, last)} of ${last}…`;
      const part = await call(`/${current.id}?metrics_after=${done}&metrics_until=${done + RANGE_STEPS}`);
      if (view !== current) return;
      addMetrics(current, part.metrics);
      current.detail = part;
      renderCharts();
    }
    status.hidden = true;
    current.loaded = true;
    refreshHealth(call, run).then(() => { if (view === current) renderCharts(); });
  } finally {
    current.loading = false;
  }
}

async function refreshSelected() {
  const current = view;
  if (current.missing || current.loading) return;
  let run;
  try {
    if (!current.loaded) { await openRun(current); return; }
    run = await call(`/${current.id}?metrics_after=${current.lastStep ?? -1}`);
  } catch (error) {
    if (error.status === 404 && view === current) { runMissing(current, error); return; }
    throw error;
  }
  const response = await call(`/${current.id}/logs?offset=${current.logOffset}`, { raw: true });
  const bytes = await response.arrayBuffer();
  if (view !== current) return; // another run was selected meanwhile
  addMetrics(current, run.metrics);
  current.logOffset = Number(response.headers.get("X-Log-Offset"));
  current.logText = (current.logText + current.decoder.decode(bytes, { stream: true })).slice(-LOG_KEEP);
  renderDetail(run);
  renderLog();
  refreshCompletions();
  refreshHealth(call, run).then(() => { if (view === current) renderCharts(); });
}

async function refresh() {
  if (!getToken()) { // nothing to ask the service without a token: say what is needed
    $("token-needed").hidden = false;
    $("token-form").hidden = false;
    $("runs-empty").hidden = true;
    const refused = refusedTokenText(); // said until a new token is given: why the tab has none, and what to do
    $("message").hidden = !refused;
    $("message").textContent = refused;
    document.body.dataset.ready = "true";
    return;
  }
  $("token-needed").hidden = true;
  try {
    const { runs } = await call("");
    $("message").hidden = true;
    $("token-form").hidden = true;
    if (!view && runs.length) select(runs[0].id);
    renderList(runs);
    if (view) await refreshSelected();
  } catch (error) {
    $("message").hidden = false;
    $("message").textContent = (error.status === 401 && refusedTokenText()) || explainError(error);
    $("token-form").hidden = error.status !== 401;
    $("runs-empty").hidden = true; // unknown, not empty
  } finally {
    document.body.dataset.ready = "true";
  }
}

async function act(action) {
  try {
    const answer = await call(`/${view.id}/${action}`, { method: "POST" });
    dismiss();
    if (action.startsWith("resume")) select(answer.id, { push: true });
    await refresh();
  } catch (error) {
    const what = action.startsWith("resume") ? "Resume" : "Cancel";
    notify(error.status === 409 ? `${what} was refused: ${error.message}.` : explainError(error));
  }
}

// Cancelling loses what was trained since the last checkpoint: say how much, and ask.
async function confirmCancel() {
  if (!view?.detail) return;
  let run = view.detail;
  try { // the latest step and checkpoint, not those of the last poll
    run = await call(`/${view.id}?metrics_after=${Number.MAX_SAFE_INTEGER}`);
  } catch { /* the last poll's numbers will do */ }
  if (!ACTIVE.has(run.state)) { // it ended since the last poll: nothing to ask about
    notify(`Run ${run.id} has already ${run.state}: there is nothing to cancel.`);
    return;
  }
  const p = run.progress || {};
  const since = p.steps_since_checkpoint;
  const lost = run.state === "queued" ? "It has not started: nothing is lost."
    : since == null ? "No step has been logged yet."
    : p.last_checkpoint_step != null
      ? `${since} step${since === 1 ? "" : "s"} since the last checkpoint (step ${p.last_checkpoint_step}) will be lost; ` +
        "resume starts again from that checkpoint."
      : `There is no checkpoint yet: all ${since} step${since === 1 ? "" : "s"} will be lost.`;
  if (await ask({ title: `Cancel run ${run.id}?`, text: lost, confirm: "Cancel the run", cancel: "Keep it running",
                  id: "cancel-dialog" })) act("cancel");
}

// Whether the service has runs on (GET /api/v1/capabilities); when it cannot say, it is asked as if they were.
async function runsAreOn() {
  try {
    const answer = await fetch("/api/v1/capabilities");
    return !answer.ok || (await answer.json()).runs !== false;
  } catch {
    return true;
  }
}

async function main() {
  takeTokenFromUrl();
  select(selectedFromUrl());
  $("token").value = getToken();
  window.addEventListener("hashchange", followAddress);
  window.addEventListener("popstate", followAddress);
  $("token-form").addEventListener("submit", (event) => { event.preventDefault(); setToken($("token").value); refresh(); });
  $("cancel").addEventListener("click", confirmCancel);
  $("resume").addEventListener("click", () => act("resume"));
  $("resume-newest").addEventListener("click", (event) => {
    if (event.currentTarget.dataset.run) select(event.currentTarget.dataset.run, { push: true });
  });
  $("resume-more").addEventListener("click", () => {
    const steps = view?.detail?.resume?.max_steps;
    if (steps) act(`resume?max_steps=${steps}`);
  });
  $("edit-in-form").addEventListener("click", () => { if (view) location.assign(`/#edit-run=${view.id}`); });
  $("compare-open").addEventListener("click", () => compareRuns([...picked]));
  $("notice-dismiss").addEventListener("click", dismiss);
  for (const link of ["dl-csv", "dl-jsonl", "dl-completions"]) { $(link).href = "#"; $(link).addEventListener("click", download); }
  setupCompletions();
  if (!(await runsAreOn())) { // no token was ever printed: say how runs are turned on, and ask for nothing
    $("runs-off").hidden = false;
    $("runs-empty").hidden = true;
    document.body.dataset.ready = "true";
    return;
  }
  refresh();
  setInterval(refresh, 1000);
}

main();

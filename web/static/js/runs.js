// The runs page: every run with its state, and for the selected one live charts (reward, loss, KL), the log
// tail, cancel and resume. It polls once a second and fetches only what is new: metrics after the last step
// seen, log bytes after the last offset.

import { lineChart, series } from "./chart.js";
import { el } from "./dom.js";
import { call, explainError, getToken, setToken, takeTokenFromUrl } from "./runs-api.js";

const $ = (id) => document.getElementById(id);
const CHARTS = ["reward", "loss", "kl"];
const LOG_KEEP = 256 * 1024; // characters of log kept in the page
const LOG_LINES = 400;
const ACTIVE = new Set(["queued", "running"]);
let view = null; // the selected run: { id, metrics, lastStep, logOffset, logText, decoder, detail }

function selectedFromUrl() {
  const found = location.hash.match(/(?:^#|&)run=([0-9a-f]{12})/);
  return found ? found[1] : null;
}

function select(id) {
  if (view && view.id === id) return;
  view = id ? { id, metrics: [], lastStep: null, logOffset: 0, logText: "", decoder: new TextDecoder() } : null;
  if (id) history.replaceState(null, "", `/runs#run=${id}`);
  $("log").textContent = "";
  $("charts").replaceChildren();
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");
const num = (value) => (typeof value === "number" ? Number(value.toPrecision(3)).toString() : "");

function renderList(runs) {
  $("runs-empty").hidden = runs.length > 0;
  $("runs-body").replaceChildren(...runs.map((run) => el("tr", {
    "data-run-id": run.id, "data-state": run.state, class: view && view.id === run.id ? "selected" : "",
    onclick: () => { select(run.id); refresh(); },
  }, el("td", {}, el("code", { text: run.id })), el("td", {}, el("span", { class: `state ${run.state}`, text: run.state })),
     el("td", { text: run.step ?? "" }), el("td", { text: num(run.latest?.reward) }), el("td", { text: when(run.created_at) }))));
}

function renderDetail(run) {
  $("detail").hidden = false;
  $("run-title").textContent = `Run ${run.id}`;
  const state = $("run-state");
  state.textContent = run.state + (run.cancel_requested && ACTIVE.has(run.state) ? " (cancelling…)" : "");
  state.className = `state ${run.state}`;
  state.dataset.state = run.state;
  const facts = [["output_dir", run.output_dir], ["world size", run.world_size], ["exit code", run.exit_code],
    ["reason", run.reason], ["resumed from", run.resumed_from], ["started", when(run.started_at)],
    ["finished", when(run.finished_at)], ["checkpoints", run.checkpoints.join(", ")]];
  $("run-facts").replaceChildren(...facts.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => el("div", { class: "fact" }, el("dt", { text: k }), el("dd", { text: String(v) }))));
  $("cancel").disabled = !ACTIVE.has(run.state) || run.cancel_requested;
  $("resume").disabled = ACTIVE.has(run.state) || run.checkpoints.length === 0;
  $("config").textContent = run.config;
  const names = CHARTS.filter((name) => name !== "kl" || view.metrics.some((r) => typeof r.kl === "number"));
  $("charts").replaceChildren(...names.map((name) => lineChart(name, series(view.metrics, name))));
}

// Progress bars redraw one line with carriage returns: show what the line says last.
function renderLog() {
  const box = $("log");
  const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
  const lines = view.logText.split("\n").slice(-LOG_LINES).map((line) => line.slice(line.lastIndexOf("\r") + 1));
  box.textContent = lines.join("\n");
  if (atBottom) box.scrollTop = box.scrollHeight;
}

async function refreshSelected() {
  const current = view;
  const after = current.lastStep === null ? "" : `?metrics_after=${current.lastStep}`;
  const run = await call(`/${current.id}${after}`);
  const response = await call(`/${current.id}/logs?offset=${current.logOffset}`, { raw: true });
  const bytes = await response.arrayBuffer();
  if (view !== current) return; // another run was selected meanwhile
  current.metrics.push(...run.metrics);
  if (run.metrics.length) current.lastStep = run.metrics[run.metrics.length - 1].step;
  current.logOffset = Number(response.headers.get("X-Log-Offset"));
  current.logText = (current.logText + current.decoder.decode(bytes, { stream: true })).slice(-LOG_KEEP);
  renderDetail(run);
  renderLog();
}

async function refresh() {
  try {
    const { runs } = await call("");
    $("message").hidden = true;
    $("token-form").hidden = true;
    if (!view && runs.length) select(runs[0].id);
    renderList(runs);
    if (view) await refreshSelected();
  } catch (error) {
    $("message").hidden = false;
    $("message").textContent = explainError(error);
    $("token-form").hidden = error.status !== 401;
  } finally {
    document.body.dataset.ready = "true";
  }
}

async function act(action) {
  try {
    const answer = await call(`/${view.id}/${action}`, { method: "POST" });
    if (action === "resume") select(answer.id);
    await refresh();
  } catch (error) {
    $("message").hidden = false;
    $("message").textContent = explainError(error);
  }
}

function main() {
  takeTokenFromUrl();
  select(selectedFromUrl());
  $("token").value = getToken();
  $("token-form").addEventListener("submit", (event) => { event.preventDefault(); setToken($("token").value); refresh(); });
  $("cancel").addEventListener("click", () => act("cancel"));
  $("resume").addEventListener("click", () => act("resume"));
  refresh();
  setInterval(refresh, 1000);
}

main();

// The completions view of the selected run: per logged step, each prompt with its group of completions, each
// reward function's score, the total reward, advantage, length and truncation. Sort and filter in the page;
// the best and worst of each group are marked. "Follow" moves to the newest step as it arrives. A step's rows come
// 200 at a time ("Load more"; the note says how many of the step's rows are loaded). Every text from
// the run is set as textContent; a completion the service cut (over 20,000 characters) has "show all".

import { el } from "./dom.js";
import { call } from "./runs-api.js";

const $ = (id) => document.getElementById(id);
let state = null; // { id, step, steps, rows, follow, busy }

const num = (v) => (typeof v === "number" ? Number(v.toPrecision(4)).toString() : "–");

export function resetCompletions(id) {
  state = id ? { id, full: new Map(), signature: null, step: null, steps: [], rows: [], follow: true, busy: false, source: null, skipped: 0 } : null;
  $("completions-list").replaceChildren();
  $("completions-step").replaceChildren();
  $("completions-note").textContent = "";
  $("completions-more").hidden = true;
}

const PAGE = 200; // rows per request (the service's most); "Load more" asks for the next ones

const signatureOf = (step, total, skipped, steps, rows) => `${step}|${total}|${skipped}|${steps}|${rows.map((r) => r.index).join()}`;

export async function refreshCompletions() {
  const current = state;
  if (!current || current.busy) return;
  current.busy = true;
  const asked = { follow: current.follow, step: current.step };
  let again = false;
  try {
    const head = await call(`/${current.id}/completions?limit=1`);
    const latest = head.steps.length ? head.steps[head.steps.length - 1] : null;
    const target = current.follow || current.step == null ? latest : current.step;
    const page = target == null ? head : await call(`/${current.id}/completions?limit=${PAGE}&step=${target}`);
    if (state !== current) return;
    // the user picked a step (or followed again) while this was on its way: their choice wins, read it instead
    if (current.follow !== asked.follow || current.step !== asked.step) { again = true; return; }
    current.steps = head.steps;
    // rows loaded beyond the first page (Load more) stay while the first page is the same: a file only grows
    const kept = current.step === target && current.rows.length > page.rows.length
      && page.rows.every((row, i) => current.rows[i].index === row.index);
    const rows = kept ? current.rows : page.rows;
    current.step = target;
    const signature = signatureOf(target, page.total, page.skipped, page.steps.length, rows);
    if (signature === current.signature) return; // nothing new: keep the page (focus, scroll, shown texts) as it is
    current.signature = signature;
    current.rows = rows;
    current.source = page.source;
    current.skipped = page.skipped;
    current.total = page.total;
    render();
  } catch (error) {
    $("completions-note").textContent = `Completions could not be read: ${error.message}`;
  } finally {
    current.busy = false;
    if (again) refreshCompletions();
  }
}

// The next rows of the step shown, after those already loaded.
async function loadMore() {
  const current = state;
  while (current?.busy) await new Promise((done) => setTimeout(done, 50)); // a poll on its way ends first
  if (!current || state !== current || current.step == null || current.rows.length >= current.total) return;
  current.busy = true;
  const button = $("completions-more");
  button.disabled = true;
  const step = current.step;
  const first = current.rows.length;
  try {
    const page = await call(`/${current.id}/completions?limit=${PAGE}&offset=${first}&step=${step}`);
    if (state !== current || current.step !== step) return;
    current.rows = current.rows.concat(page.rows);
    current.total = page.total;
    current.skipped = page.skipped;
    current.signature = signatureOf(step, page.total, page.skipped, page.steps.length, current.rows);
    render();
    if (button.hidden) { // all loaded: the focus goes to the first new completion
      document.querySelector(`#completions-list .completion[data-index="${page.rows[0]?.index}"] .completion-text`)?.focus();
    }
  } catch (error) {
    $("completions-note").textContent = `More completions could not be read: ${error.message}`;
  } finally {
    current.busy = false;
    button.disabled = false;
  }
}

function renderSteps() {
  const select = $("completions-step");
  const wanted = state.steps.map(String);
  const have = [...select.options].map((o) => o.value);
  if (wanted.join() !== have.join()) {
    select.replaceChildren(...state.steps.map((s) => el("option", { value: String(s), text: `step ${s}` })));
  }
  if (state.step != null) select.value = String(state.step);
  $("completions-follow").checked = state.follow;
  const functions = [...new Set(state.rows.flatMap((r) => Object.keys(r.rewards || {})))];
  const sort = $("completions-sort");
  const options = [["order", "file order"], ["reward-desc", "reward, highest first"], ["reward-asc", "reward, lowest first"],
    ["advantage-desc", "advantage, highest first"], ["length-desc", "length, longest first"],
    ...functions.map((f) => [`fn:${f}`, `${f}, highest first`])];
  if ([...sort.options].map((o) => o.value).join() !== options.map(([v]) => v).join()) {
    const keep = sort.value;
    sort.replaceChildren(...options.map(([value, text]) => el("option", { value, text })));
    sort.value = options.some(([v]) => v === keep) ? keep : "order";
  }
  const fn = $("completions-function");
  const fnOptions = ["", ...functions];
  if ([...fn.options].map((o) => o.value).join() !== fnOptions.join()) {
    const keep = fn.value;
    fn.replaceChildren(...fnOptions.map((f) => el("option", { value: f, text: f || "total reward" })));
    fn.value = fnOptions.includes(keep) ? keep : "";
  }
}

function score(row, fn) { return fn ? row.rewards?.[fn] : row.reward; }

function groups(rows) { // consecutive rows of one step and prompt form a group
  const out = [];
  for (const row of rows) {
    const last = out[out.length - 1];
    if (last && last.step === row.step && last.prompt === row.prompt) last.rows.push(row);
    else out.push({ step: row.step, prompt: row.prompt, promptCut: row.prompt_cut, rows: [row] });
  }
  return out;
}

function sortRows(rows, how) {
  const key = how === "reward-desc" || how === "reward-asc" ? (r) => r.reward
    : how === "advantage-desc" ? (r) => r.advantage : how === "length-desc" ? (r) => r.length
    : how.startsWith("fn:") ? (r) => r.rewards?.[how.slice(3)] : null;
  if (!key) return rows;
  const sign = how === "reward-asc" ? 1 : -1;
  return [...rows].sort((a, b) => sign * ((key(a) ?? -Infinity) - (key(b) ?? -Infinity)));
}

async function showAll(row, pre, button) {
  button.disabled = true;
  try {
    const page = await call(`/${state.id}/completions?limit=1&offset=${row.index}&full=1`);
    const text = page.rows[0]?.completion;
    if (typeof text === "string") { state.full.set(row.index, text); pre.textContent = text; }
    button.remove();
    pre.focus();
  } catch (error) {
    button.disabled = false;
    button.textContent = `show all (failed: ${error.message})`;
  }
}

function completionItem(row, marks) {
  const whole = state.full.get(row.index);
  const pre = el("pre", { class: "completion-text", tabindex: "0", text: whole ?? row.completion });
  const fns = Object.entries(row.rewards || {}).map(([name, value]) =>
    el("span", { class: "score", "data-function": name, text: `${name} ${num(value)}` }));
  const mark = marks.best ? "best" : marks.worst ? "worst" : null;
  const item = el("li", { class: `completion${mark ? ` ${mark}` : ""}`, "data-index": String(row.index),
                          "data-truncated": String(Boolean(row.truncated)) },
    el("div", { class: "completion-meta" },
      mark ? el("span", { class: `mark ${mark}`, text: mark }) : null,
      el("span", { class: "total", text: `reward ${num(row.reward)}` }), ...fns,
      el("span", { text: `advantage ${num(row.advantage)}` }),
      el("span", { text: `length ${row.length ?? "–"}` }),
      row.truncated ? el("span", { class: "truncated", text: "truncated" }) : null),
    pre);
  if (row.completion_cut && whole === undefined) {
    const button = el("button", { type: "button", class: "show-all",
      text: `show all (${row.completion_chars.toLocaleString()} characters)` });
    button.addEventListener("click", () => showAll(row, pre, button));
    item.append(button);
  }
  return item;
}

function render() {
  renderSteps();
  const query = $("completions-search").value.trim().toLowerCase();
  const truncatedOnly = $("completions-truncated").checked;
  const fn = $("completions-function").value;
  const min = $("completions-min").value === "" ? null : Number($("completions-min").value);
  const how = $("completions-sort").value || "order";
  const shown = groups(state.rows).map((group) => {
    const values = group.rows.map((r) => score(r, fn)).filter((v) => typeof v === "number");
    const best = values.length > 1 ? Math.max(...values) : null;
    const worst = values.length > 1 ? Math.min(...values) : null;
    const rows = sortRows(group.rows.filter((r) => (!truncatedOnly || r.truncated)
      && (min == null || (typeof score(r, fn) === "number" && score(r, fn) >= min))
      && (!query || r.completion.toLowerCase().includes(query) || group.prompt.toLowerCase().includes(query))), how);
    return { group, rows, best, worst };
  }).filter(({ rows }) => rows.length);
  $("completions-list").replaceChildren(...shown.map(({ group, rows, best, worst }) =>
    el("li", { class: "group" },
      el("div", { class: "prompt-label", text: `step ${group.step}: prompt` }),
      el("pre", { class: "prompt-text", text: group.prompt }),
      el("ol", { class: "completions", "aria-label": `completions of this prompt (${rows.length})` },
        ...rows.map((r) => completionItem(r, { best: best != null && best !== worst && score(r, fn) === best,
                                               worst: worst != null && best !== worst && score(r, fn) === worst }))))));
  const source = state.source === "completions-sample.jsonl" ? " (a sample: log_completions is off)" : "";
  const skipped = state.skipped ? `; ${state.skipped} unreadable line(s) skipped` : "";
  const total = state.total ?? state.rows.length;
  const partial = state.rows.length < total ? "; sort and filters apply to the rows loaded" : "";
  $("completions-note").textContent = state.source
    ? `${state.rows.length} of ${total} completion(s) of step ${state.step}${source}${skipped}${partial}`
    : "No completions logged yet.";
  const more = $("completions-more");
  const left = total - state.rows.length;
  more.hidden = !state.source || left <= 0;
  more.textContent = `Load ${Math.min(PAGE, left)} more (${left} not loaded yet)`;
}

export function setupCompletions() {
  $("completions-more").addEventListener("click", loadMore);
  $("completions-step").addEventListener("change", (event) => {
    state.follow = false; state.step = Number(event.target.value);
    $("completions-follow").checked = false;  // at once: picking a step stops following
    refreshCompletions();
  });
  $("completions-follow").addEventListener("change", (event) => { state.follow = event.target.checked; refreshCompletions(); });
  for (const id of ["completions-search", "completions-truncated", "completions-function", "completions-min", "completions-sort"]) {
    $(id).addEventListener("input", () => state && render());
    $(id).addEventListener("change", () => state && render());
  }
}

// The completions view of the selected run: per logged step, each prompt with its group of completions, each
// reward function's score, the total reward, advantage, length and truncation, the best and worst of each group
// marked. Sort and filters are asked of the service, which applies them to every row of the step (never to the
// rows loaded here) and marks the groups. "Follow" moves to the newest step as it arrives. A step's rows come
// 200 at a time ("Load more"; the note says how many of the rows that match are loaded, and how many the step
// has). Every text from the run is set as textContent; a completion the service cut (over 20,000 characters) has
// "show all".

import { count, el } from "./dom.js";
import { call } from "./runs-api.js";

const $ = (id) => document.getElementById(id);
let state = null; // { id, step, steps, rows, follow, busy, query, functions }

const num = (v) => (typeof v === "number" ? Number(v.toPrecision(4)).toString() : "–");
// The runtime numbers a generation by the optimizer steps done before it (0 for the one step 1 trains on); the
// charts number steps from 1. The view says the step the charts say: the file's step + 1 (a generation that feeds
// several steps is shown at the first).
const chartStep = (fileStep) => fileStep + 1;

export function resetCompletions(id) {
  state = id ? { id, full: new Map(), signature: null, step: null, steps: [], rows: [], follow: true, busy: false,
                 source: null, skipped: 0, query: queryOf(), functions: [] } : null;
  $("completions-list").replaceChildren();
  $("completions-step").replaceChildren();
  $("completions-note").textContent = "";
  $("completions-more").hidden = true;
}

const PAGE = 200; // rows per request (the service's most); "Load more" asks for the next ones

const signatureOf = (query, step, total, skipped, steps, rows) =>
  `${query}|${step}|${total}|${skipped}|${steps}|${rows.map((r) => r.index).join()}`;

// The sort and filters in the controls, as the service's query parameters ("" when none is set).
function queryOf() {
  const q = new URLSearchParams();
  const sort = $("completions-sort").value || "order";
  if (sort !== "order") q.set("sort", sort);
  if ($("completions-function").value) q.set("score", $("completions-function").value);
  const min = $("completions-min").value;
  if (min !== "" && Number.isFinite(Number(min))) q.set("min", min);
  if ($("completions-truncated").checked) q.set("truncated", "true");
  const text = $("completions-search").value.trim();
  if (text) q.set("q", text);
  return q.toString();
}

const filtered = (query) => /(^|&)(min|truncated|q)=/.test(query);

export async function refreshCompletions() {
  const current = state;
  if (!current || current.busy) return;
  current.busy = true;
  const asked = { follow: current.follow, step: current.step, query: current.query };
  let again = false;
  try {
    const head = await call(`/${current.id}/completions?limit=1`);
    const latest = head.steps.length ? head.steps[head.steps.length - 1] : null;
    const target = current.follow || current.step == null ? latest : current.step;
    const query = asked.query ? `&${asked.query}` : "";
    const page = target == null ? head : await call(`/${current.id}/completions?limit=${PAGE}&step=${target}${query}`);
    if (state !== current) return;
    // the user picked a step, followed again or changed the sort or filters while this was on its way: their
    // choice wins, read it instead
    if (current.follow !== asked.follow || current.step !== asked.step || current.query !== asked.query) {
      again = true;
      return;
    }
    current.steps = head.steps;
    // rows loaded beyond the first page (Load more) stay while the first page is the same: a file only grows
    const kept = current.step === target && current.shownQuery === asked.query && current.rows.length > page.rows.length
      && page.rows.every((row, i) => current.rows[i].index === row.index);
    const rows = kept ? current.rows : page.rows;
    current.step = target;
    const signature = signatureOf(asked.query, target, page.total, page.skipped, page.steps.length, rows);
    if (signature === current.signature) return; // nothing new: keep the page (focus, scroll, shown texts) as it is
    current.signature = signature;
    current.rows = rows;
    current.source = page.source;
    current.skipped = page.skipped;
    current.total = page.total;
    current.unfiltered = page.total_unfiltered ?? page.total;
    current.functions = page.functions || [];
    current.shownQuery = asked.query;
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
  const query = current.shownQuery;
  const first = current.rows.length;
  try {
    const page = await call(`/${current.id}/completions?limit=${PAGE}&offset=${first}&step=${step}${query ? `&${query}` : ""}`);
    if (state !== current || current.step !== step || current.query !== query) return;
    current.rows = current.rows.concat(page.rows);
    current.total = page.total;
    current.unfiltered = page.total_unfiltered ?? page.total;
    current.skipped = page.skipped;
    current.signature = signatureOf(query, step, page.total, page.skipped, page.steps.length, current.rows);
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
    select.replaceChildren(...state.steps.map((s) => el("option", { value: String(s), text: `step ${chartStep(s)}` })));
  }
  if (state.step != null) select.value = String(state.step);
  $("completions-follow").checked = state.follow;
  const functions = state.functions;
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

function groups(rows) { // consecutive rows of one step and prompt form a group
  const out = [];
  for (const row of rows) {
    const last = out[out.length - 1];
    if (last && last.step === row.step && last.prompt === row.prompt) last.rows.push(row);
    else out.push({ step: row.step, prompt: row.prompt, promptCut: row.prompt_cut, rows: [row] });
  }
  return out;
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

function completionItem(row) {
  const whole = state.full.get(row.index);
  const text = whole ?? row.completion;
  const pre = el("pre", { class: "completion-text", tabindex: "0", text });
  if (typeof text === "string" && !text.trim()) { // nothing to see would read as nothing logged: say what is there
    pre.classList.add("empty");
    pre.dataset.empty = "true";
    pre.textContent = text ? `(only whitespace: ${count(text.length, "character")})`
      : `(empty: no text${row.truncated ? "" : ", the model ended the completion at once"})`;
  }
  const fns = Object.entries(row.rewards || {}).map(([name, value]) =>
    el("span", { class: "score", "data-function": name, text: `${name} ${num(value)}` }));
  const mark = row.mark === "best" || row.mark === "worst" ? row.mark : null; // of its group, as the service marked it
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

// What the note says: how many of the rows that match are loaded, how many the step has, and when none match.
function noteText() {
  if (!state.source) return "No completions logged yet.";
  const source = state.source === "completions-sample.jsonl" ? " (a sample: log_completions is off)" : "";
  const skipped = state.skipped ? `; ${count(state.skipped, "unreadable line")} skipped` : "";
  const step = chartStep(state.step);
  const total = state.total ?? state.rows.length;
  const shown = state.rows.length === total ? count(total, "completion") // every one: "16 completions", not "16 of 16"
    : `${state.rows.length} of ${count(total, "completion")}`;
  if (!filtered(state.shownQuery || "")) return `${shown} of step ${step}${source}${skipped}`;
  const inStep = `${state.unfiltered} in the step`;
  return total === 0
    ? `No completion of step ${step} matches the filters (${inStep})${source}${skipped}. Clear a filter to see more.`
    : `${shown} of step ${step} ${total === 1 ? "matches" : "match"} the ` +
      `filters (${inStep})${source}${skipped}`;
}

function render() {
  renderSteps();
  $("completions-list").replaceChildren(...groups(state.rows).map((group) =>
    el("li", { class: "group" },
      el("div", { class: "prompt-label", text: `step ${chartStep(group.step)}: prompt` }),
      el("pre", { class: "prompt-text", text: group.prompt }),
      el("ol", { class: "completions", "aria-label": `completions of this prompt (${group.rows.length})` },
        ...group.rows.map(completionItem)))));
  $("completions-note").textContent = noteText();
  const more = $("completions-more");
  const left = (state.total ?? state.rows.length) - state.rows.length;
  more.hidden = !state.source || left <= 0;
  more.textContent = `Load ${Math.min(PAGE, left)} more (${left} not loaded yet)`;
}

// The sort or a filter changed: the service is asked again for the step's first rows in the new order.
function queryChanged() {
  if (!state) return;
  const query = queryOf();
  if (query === state.query) return;
  state.query = query;
  refreshCompletions();
}

export function setupCompletions() {
  $("completions-more").addEventListener("click", loadMore);
  $("completions-step").addEventListener("change", (event) => {
    state.follow = false; state.step = Number(event.target.value);
    $("completions-follow").checked = false;  // at once: picking a step stops following
    refreshCompletions();
  });
  $("completions-follow").addEventListener("change", (event) => { state.follow = event.target.checked; refreshCompletions(); });
  let typing = null; // the search and the minimum ask once the typing pauses, not at every key
  for (const id of ["completions-search", "completions-truncated", "completions-function", "completions-min", "completions-sort"]) {
    $(id).addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(queryChanged, 250); });
    $(id).addEventListener("change", () => { clearTimeout(typing); queryChanged(); });
  }
}

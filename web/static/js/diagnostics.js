// Diagnostics in two places: beside each field they name, and in the summary list, whose items scroll to the
// field. Both come from the same server objects (interface.md §3), unchanged. When runs are on, what the
// service's run policy would refuse at launch is shown the same way, marked "launch". When the server cannot be
// reached, the last diagnostics stay but are marked stale and their fix buttons are disabled: they describe a
// config that is no longer the one in the form.

import { el } from "./dom.js";
import { topKey } from "./state.js";
import { formatNumber } from "./values.js";

const SEVERITY_RANK = { error: 0, warning: 1, info: 2 };

function keysOf(diag) {
  return [...new Set((diag.fields || []).map(topKey))];
}

function fixLabel(fix) {
  if (fix.title) return fix.title;
  const parts = [
    ...Object.entries(fix.rename || {}).map(([a, b]) => `rename ${a} to ${b}`),
    ...(fix.unset || []).map((k) => `remove ${k}`),
    ...Object.entries(fix.set || {}).map(([k, v]) => `set ${k}: ${typeof v === "number" ? formatNumber(v) : JSON.stringify(v)}`),
  ];
  return parts.join(", ") || "apply fix";
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// What the banner says of the memory panel: its findings by code and hardware, that it fits, or why it cannot say.
function memoryClause(memory, counted) {
  if (memory.state !== "done") return "; checking memory…";
  const on = memory.spec ? ` on ${memory.spec}${memory.source ? ` (${memory.source})` : ""}` : "";
  if (counted.length) {
    const codes = [...new Set(counted.map((d) => d.code))].join(", ");
    const none = memory.fits === true || memory.fits === false ? "" : "; no memory estimate";
    return `; ${counted.length} of them from the memory panel: ${codes}${on}${none}`;
  }
  if (memory.fits === true) return `; fits in memory${on}`;
  if (memory.fits === false) return `; does not fit in memory${on} (see the memory panel)`;
  return "; no memory estimate (see the memory panel)";
}

// "valid for world sizes 7, 14, 21" -> [7, 14, 21]
export function worldSizesIn(text) {
  const found = /world sizes? ((?:\d+(?:, | or | and |, or )?)+)/.exec(text || "");
  return found ? [...found[1].matchAll(/\d+/g)].map((m) => Number(m[0])).filter((n) => n >= 1) : [];
}

// "validate with --profile open-r1" -> "open-r1"; "... without a profile ..." -> "" (no profile)
function profileIn(text) {
  if (/\bwithout a profile\b/.test(text || "")) return "";
  return /--profile ([A-Za-z0-9_.-]+)/.exec(text || "")?.[1];
}

// The field a fix changes (where the keyboard focus goes after it): what it sets, renames to, or removes.
function changedKey(fix) {
  const keys = [...Object.keys(fix.set || {}), ...Object.values(fix.rename || {}), ...(fix.unset || [])];
  return keys.length ? topKey(keys[0]) : null;
}

export class DiagnosticsView {
  constructor({ form, list, status, onFix, onWorldSize, onProfile, fileNotes }) {
    this.form = form;
    this.list = list;
    this.status = status;
    this.onFix = onFix;
    this.onWorldSize = onWorldSize;
    this.onProfile = onProfile;
    this.fileNotes = fileNotes || (() => []); // what only the imported text shows (duplicate keys, ...)
    this.stale = false;
    this.byKey = new Map();
    this.pendingFocus = null;
    this.verdict = { errors: 0, refused: 0, blocking: [] };
    this.memory = { state: "checking" }; // what the memory panel finds (MemoryBar's onVerdict)
    this.setForm(form);
  }

  // The memory panel's latest finding: the banner counts it with the config's own diagnostics.
  setMemory(memory) {
    this.memory = memory;
    if (this.lastResult && !this.stale) this.renderStatus(this.lastResult, this.lastDiagnostics);
  }

  // After a fix the button that was pressed is gone (the diagnostics are redrawn): the focus goes to the field
  // the fix changed, else (the field is gone too) to the diagnostic that now stands where this one stood.
  afterFix(fix, button) {
    if (button.closest("dialog")) return; // the dialog keeps the focus (the launch dialog redraws itself)
    const key = changedKey(fix);
    const inList = this.list.contains(button);
    const index = inList ? [...this.list.children].indexOf(button.closest("li")) : -1;
    const row = key ? this.form.reveal(key) : null;
    if (row && document.activeElement === row.input) return;
    this.pendingFocus = { index: Math.max(index, 0) };
    this.focusPending();
  }

  focusPending() {
    if (!this.pendingFocus) return;
    const items = [...this.list.children].filter((li) => !li.classList.contains("notes-title"));
    const item = items[Math.min(this.pendingFocus.index, items.length - 1)];
    const target = item?.querySelector("button:not([disabled])") || item;
    if (!target) return;
    if (target === item) item.setAttribute("tabindex", "-1");
    target.focus();
    if (document.activeElement === target) this.pendingFocus = null;
  }

  // A new form (the profile changed the schema): draw the last diagnostics into it.
  setForm(form) {
    this.form = form;
    form.onBuilt = (section) => section.fields.forEach((f) => this.renderField(f.name));
    if (this.lastResult) this.show(this.lastResult);
  }

  diagNode(diag, { withLocation = false } = {}) {
    const fixes = [diag.fix, ...(diag.alternatives || [])].filter(Boolean);
    const where = withLocation && diag.line ? ` (line ${diag.line})` : "";
    return el("div", { class: `diag ${diag.severity}${diag.launch ? " launch" : ""}`, "data-code": diag.code },
      el("span", { class: "sev", text: diag.severity }), " ",
      diag.launch ? el("span", { class: "tag", text: "at launch", title: "the service's run policy refuses this; " +
        "trl grpo itself would accept it" }) : null, diag.launch ? " " : null,
      el("span", { class: "code", text: diag.code }), " ",
      el("span", { class: "msg", text: diag.message + where }),
      diag.hint ? el("div", { class: "hint", text: diag.hint }) : null,
      this.actions(diag, fixes));
  }

  // Fix buttons, world-size buttons for the sizes a hint names, and "use the profile" for a profile's key.
  actions(diag, fixes) {
    // a few sizes, not one a fix already offers as num_processes
    const offered = new Set(fixes.map((f) => f.set?.num_processes).filter(Boolean));
    const sizes = worldSizesIn(diag.hint).filter((n) => !offered.has(n)).slice(0, 4);
    const profile = profileIn(diag.hint); // a name, "" for none, or undefined
    const buttons = [
      ...fixes.map((fix) => el("button", {
        type: "button", class: "fix", text: `Fix: ${fixLabel(fix)}`, disabled: this.stale,
        title: fix.safe ? "safe fix" : "changes meaning",
        onclick: (event) => { const button = event.currentTarget; this.onFix(fix); this.afterFix(fix, button); } })),
      ...sizes.map((n) => el("button", { type: "button", class: "fix world", text: `Use world size ${n}`,
        "data-world-size": n, disabled: this.stale, title: "sets the toolbar's world size",
        onclick: (event) => {
          const inDialog = event.currentTarget.closest("dialog");
          this.onWorldSize(n);
          if (!inDialog) document.getElementById("world-size").focus();
        } })),
      profile !== undefined && this.onProfile ? el("button", { type: "button", class: "fix profile",
        disabled: this.stale, text: profile ? `Use the ${profile} profile` : "Use no profile", "data-profile": profile,
        onclick: () => this.onProfile(profile) }) : null,
    ].filter(Boolean);
    return buttons.length ? el("div", { class: "fixes" }, buttons) : null;
  }

  // The server stopped answering: keep what is shown, say it is stale, disable every fix.
  markStale(stale, message) {
    this.stale = stale;
    for (const root of [this.list, this.form.container]) {
      root.classList.toggle("stale", stale);
      root.querySelectorAll("button.fix").forEach((b) => { b.disabled = stale; });
    }
    document.getElementById("apply-safe").disabled = stale || !this.safeFixes().length;
    if (stale) {
      this.status.className = "status stale";
      this.status.textContent = message;
    }
  }

  // Safe fixes of the current diagnostics, once each.
  safeFixes() {
    const seen = new Set();
    return (this.lastResult?.diagnostics || []).flatMap((d) => [d.fix, ...(d.alternatives || [])])
      .filter((f) => f && f.safe && !seen.has(JSON.stringify(f)) && seen.add(JSON.stringify(f)));
  }

  // The latest validation result (and the imported file's own notes, e.g. duplicate keys).
  show(result) {
    this.lastResult = result;
    this.stale = false;
    const launch = (result.launch_diagnostics || []).map((d) => ({ ...d, launch: true }));
    const diagnostics = [...(result.diagnostics || []), ...launch]
      .sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity]);
    this.byKey = new Map();
    for (const diag of diagnostics) {
      const primary = this.target(diag);
      for (const key of keysOf(diag)) this.byKey.set(key, [...(this.byKey.get(key) || []), { diag, primary }]);
    }
    const previous = new Set(this.rendered || []);
    this.rendered = [...this.byKey.keys()];
    for (const key of new Set([...previous, ...this.rendered])) this.renderField(key);
    this.form.flagged = new Set(this.rendered);
    this.form.applyVisibility();
    this.renderList(diagnostics);
    this.lastDiagnostics = diagnostics;
    this.renderStatus(result, diagnostics);
    this.focusPending();
    this.form.updateCounts(this.sectionCounts(diagnostics));
    this.markStale(false);
    const safe = this.safeFixes().length;
    const button = document.getElementById("apply-safe");
    button.hidden = safe === 0;
    button.textContent = `Apply ${safe} safe fix${safe === 1 ? "" : "es"}`;
  }

  renderField(key) {
    const row = this.form.rows.get(key);
    if (!row) return;
    const entries = this.byKey.get(key) || [];
    row.diagBox.replaceChildren(...entries.map(({ diag, primary }) =>
      (primary === key ? this.diagNode(diag) : this.mentionNode(diag, primary))));
    row.input.setAttribute("aria-invalid", entries.some((e) => e.diag.severity === "error") ? "true" : "false");
    row.row.dataset.severity = entries.length ? entries[0].diag.severity : "";
  }

  // A diagnostic shown in full beside another field: here only its code and a way there.
  mentionNode(diag, primary) {
    return el("div", { class: `diag mention ${diag.severity}`, "data-code": diag.code },
      el("span", { class: "sev", text: diag.severity }), " ", el("span", { class: "code", text: diag.code }),
      ` involves this field; see `,
      el("button", { type: "button", class: "go", text: primary, "aria-label": `Go to field ${primary}`,
                     onclick: () => this.form.reveal(primary) }));
  }

  target(diag) {
    const keys = keysOf(diag);
    return keys.find((k) => this.form.state.has(k)) || keys[0];
  }

  listItem(diag, fromFile) {
    const key = this.target(diag);
    const node = this.diagNode(diag, { withLocation: fromFile });
    if (key) {
      const go = el("button", { type: "button", class: "go", text: `go to ${key}`,
                                "aria-label": `Go to field ${key}`, onclick: () => this.form.reveal(key) });
      node.querySelector(".msg").after(" ", go);
    }
    return el("li", {}, node);
  }

  renderList(diagnostics) {
    const items = diagnostics.map((d) => this.listItem(d, false));
    const notes = this.fileNotes().map((d) => this.listItem(d, true));
    if (notes.length) items.push(el("li", { class: "notes-title", text: "From the imported file:" }), ...notes);
    if (!items.length) items.push(el("li", { class: "muted", text: "No diagnostics: nothing to fix." }));
    this.list.replaceChildren(...items);
  }

  // One count: every diagnostic the list shows, the imported text's own (a duplicate key) included, and what the
  // memory panel finds on its hardware (the banner says which of them are the panel's).
  renderStatus(result, diagnostics) {
    const own = [...diagnostics.filter((d) => !d.launch), ...this.fileNotes()];
    const memory = this.memory.state === "done" ? this.memory.diagnostics.filter((d) => d.severity !== "info") : [];
    const count = (sev) => [...own, ...memory].filter((d) => d.severity === sev).length;
    const [errors, warnings] = [count("error"), count("warning")];
    const refusals = diagnostics.filter((d) => d.launch && d.severity === "error");
    const refused = refusals.length;
    const valid = result.valid && errors === 0;
    // Launch is blocked by what the service itself refuses; the memory panel's hardware may not be the service's.
    this.verdict = { errors, refused, worldSize: result.world_size,
                     blocking: [...own.filter((d) => d.severity === "error"), ...refusals] };
    this.status.className = `status ${valid && !refused ? "ok" : "bad"}`;
    this.status.textContent = `${valid ? "Valid" : "Invalid"} at world size ${result.world_size}: ` +
      `${plural(errors, "error")}, ${plural(warnings, "warning")}${memoryClause(this.memory, memory)}` +
      (refused ? `; Launch would be refused: ${plural(refused, "problem")} with the service's run policy` : "");
    this.onVerdict?.(this.verdict);
  }

  sectionCounts(diagnostics) {
    const counts = new Map();
    for (const diag of diagnostics) {
      const sections = new Set(keysOf(diag).map((k) => this.form.sectionOf(k)?.id).filter(Boolean));
      for (const id of sections) {
        const c = counts.get(id) || { error: 0, warning: 0, info: 0 };
        c[diag.severity] += 1;
        counts.set(id, c);
      }
    }
    return counts;
  }
}

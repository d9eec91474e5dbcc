// The form body: one collapsible section per schema group. A section's rows are built the first time it opens
// (or a search or a diagnostic needs them), so the page starts with ~25 summaries instead of ~300 inputs.
// Fields the schema marks x-advanced stay folded unless set, flagged by a diagnostic, searched for or unfolded.

import { el, idFor, richText } from "./dom.js";
import { looseField, matchesQuery } from "./fields.js";
import { sameValue } from "./values.js";
import { buildFieldRow } from "./widgets.js";

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

export class FormView {
  constructor(container, sections, state, filter = { query: "", onlyChanged: false }, suggest = null) {
    this.container = container;
    this.suggest = suggest;
    this.state = state;
    this.sections = sections;
    this.fieldByName = new Map(sections.flatMap((s) => s.fields.map((f) => [f.name, f])));
    this.rows = new Map();
    this.filter = { ...filter };
    this.flagged = new Set(); // keys some diagnostic names
    this.revealed = new Set(); // keys the user jumped to
    this.other = { id: "other-keys", title: "Other keys (not in the schema)", summary: "", fields: [] };
    this.openedByFilter = new Set();
    container.replaceChildren(...[this.other, ...sections].map((s) => this.sectionSkeleton(s)));
    this.syncOtherKeys();
  }

  get allSections() { return [this.other, ...this.sections]; }

  sectionSkeleton(section) {
    const counts = el("span", { class: "counts" });
    const toggle = el("button", { type: "button", class: "link advanced-toggle", hidden: true,
                                  onclick: () => { section.showAdvanced = !section.showAdvanced; this.applyVisibility(); } });
    const details = el("details", { class: "section", id: idFor("section", section.id), "data-group": section.id },
      el("summary", {}, el("span", { class: "section-title", text: section.title }), counts),
      section.summary ? el("p", { class: "section-summary" }, richText(section.summary)) : null,
      el("div", { class: "section-body" }), toggle);
    details.addEventListener("toggle", () => { if (details.open) this.build(section); });
    Object.assign(section, { node: details, counts, toggle, built: false, showAdvanced: false });
    return details;
  }

  build(section) {
    if (section.built) return;
    section.built = true;
    const body = section.node.querySelector(".section-body");
    for (const field of section.fields) {
      const { row } = this.rowFor(field);
      row.hidden = !this.rowShown(field, section);
      body.append(row);
    }
    this.updateToggle(section);
    this.onBuilt?.(section);
  }

  rowFor(field) {
    if (!this.rows.has(field.name)) {
      const row = buildFieldRow(field, { state: this.state, suggest: this.suggest, onReset: (f) => this.state.set(f.name, undefined, "reset") });
      row.refresh(false);
      this.rows.set(field.name, row);
    }
    return this.rows.get(field.name);
  }

  sectionOf(name) {
    const field = this.fieldByName.get(name);
    return field ? this.sections.find((s) => s.id === field.group) : this.other;
  }

  // Keys in the state that the schema does not know get rows in "Other keys"; removed keys lose theirs.
  syncOtherKeys() {
    const loose = [...this.state.values.keys()].filter((k) => !this.fieldByName.has(k));
    for (const field of this.other.fields) {
      if (!loose.includes(field.name)) { this.rows.get(field.name)?.row.remove(); this.rows.delete(field.name); }
    }
    this.other.fields = loose.map((name) => this.other.fields.find((f) => f.name === name) || looseField(name));
    if (this.other.built) {
      const body = this.other.node.querySelector(".section-body");
      for (const field of this.other.fields) if (!this.rows.has(field.name)) body.append(this.rowFor(field).row);
    }
    this.other.node.hidden = loose.length === 0;
    if (loose.length && !this.other.built) { this.other.node.open = true; this.build(this.other); }
  }

  // Refresh the rows of changed keys; a row being typed into keeps its text (and caret).
  update(keys, source) {
    this.syncOtherKeys();
    for (const key of keys) this.rows.get(key)?.refresh(source === "input");
    this.applyVisibility();
    this.updateCounts();
  }

  refreshAll() {
    for (const row of this.rows.values()) row.refresh(false);
    this.applyVisibility();
    this.updateCounts();
  }

  differs(field) {
    if (!this.state.has(field.name)) return false;
    return !field.hasDefault || !sameValue(this.state.get(field.name), field.default);
  }

  filterActive() { return this.filter.query.trim() !== "" || this.filter.onlyChanged; }

  matches(field) {
    return matchesQuery(field, this.filter.query) && (!this.filter.onlyChanged || this.differs(field));
  }

  rowShown(field, section) {
    if (this.filterActive()) return this.matches(field);
    return !field.advanced || section.showAdvanced || this.state.has(field.name) || this.flagged.has(field.name) ||
      this.revealed.has(field.name);
  }

  setFilter(change) {
    Object.assign(this.filter, change);
    this.applyVisibility();
  }

  applyVisibility() {
    const active = this.filterActive();
    let matching = 0;
    for (const section of this.allSections) {
      const found = active ? section.fields.filter((f) => this.matches(f)).length : 0;
      matching += found;
      if (found && !section.built) this.build(section);
      for (const field of section.fields) {
        const row = this.rows.get(field.name);
        if (row) row.row.hidden = !this.rowShown(field, section);
      }
      section.node.hidden = (section === this.other && !section.fields.length) || (active && !found);
      this.openForFilter(section, found > 0);
      this.updateToggle(section);
    }
    this.onFiltered?.(matching, active);
  }

  updateToggle(section) {
    const folded = section.fields.filter((f) => f.advanced && !this.rowShown(f, { ...section, showAdvanced: false }));
    section.toggle.hidden = !section.built || this.filterActive() || folded.length === 0;
    section.toggle.textContent = section.showAdvanced ? "Hide advanced fields"
      : `Show ${plural(folded.length, "more field")} (advanced)`;
  }

  // Sections opened by a search close again when it is cleared; those the user opened stay open.
  openForFilter(section, wanted) {
    if (wanted && !section.node.open) { section.node.open = true; this.openedByFilter.add(section.id); }
    if (!wanted && this.openedByFilter.has(section.id)) { section.node.open = false; this.openedByFilter.delete(section.id); }
  }

  updateCounts(diagCounts = this.lastDiagCounts || new Map()) {
    this.lastDiagCounts = diagCounts;
    for (const section of this.allSections) {
      const set = section.fields.filter((f) => this.state.has(f.name)).length;
      const c = diagCounts.get(section.id) || { error: 0, warning: 0 };
      section.counts.replaceChildren(...[
        el("span", { class: "count", text: plural(section.fields.length, "field") }),
        set ? el("span", { class: "count set", text: `${set} set` }) : null,
        c.error ? el("span", { class: "count error", text: plural(c.error, "error") }) : null,
        c.warning ? el("span", { class: "count warning", text: plural(c.warning, "warning") }) : null,
      ].filter(Boolean));
    }
  }

  // Open the field's section, show the row even when folded or filtered out, scroll to it and focus its input.
  reveal(name) {
    const section = this.sectionOf(name);
    if (!section) return null;
    this.revealed.add(name);
    section.node.hidden = false;
    section.node.open = true;
    this.build(section);
    const row = this.rows.get(name);
    if (!row) return null;
    row.row.hidden = false;
    row.row.scrollIntoView({ block: "center" });
    row.input.focus({ preventScroll: true });
    row.row.classList.add("flash");
    setTimeout(() => row.row.classList.remove("flash"), 1200);
    return row;
  }
}

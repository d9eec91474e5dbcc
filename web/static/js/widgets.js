// One row per field: label, input, default, description and the field's diagnostics.

import { el, idFor, richText } from "./dom.js";
import { decodeChoice, encodeChoice, formatNumber, formatValue, parseText } from "./values.js";

function shown(value) {
  if (typeof value === "number") return formatNumber(value);
  return value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
}

// What applies when the field is left out, said the same way whether or not it has a value now.
function defaultLabel(field) {
  if (!field.hasDefault) return "no default";
  return field.default === null ? "default: none" : `default: ${shown(field.default)}`;
}

function choiceInput(field, id, describedBy) {
  const select = el("select", { id, "aria-describedby": describedBy });
  const unset = !field.hasDefault || field.default === null ? "not set" : defaultLabel(field);
  select.append(el("option", { value: "", text: `— ${unset} —` }));
  field.choices.forEach((choice, i) => {
    // enumDescriptions follow the enum's order, and enum values come first among the choices.
    const doc = field.enumDocs ? field.enumDocs[i] : undefined;
    select.append(el("option", { value: encodeChoice(choice), text: shown(choice), title: doc || undefined }));
  });
  return select;
}

function textInput(field, id, describedBy) {
  const multiline = field.kind === "json" || field.kind === "map";
  const numeric = ["integer", "number"].some((t) => field.accepts.types.has(t)) && !field.accepts.types.has("string");
  const hint = field.kind === "list" ? "comma-separated" : field.kind === "map" ? "KEY=value, one per line" : "";
  const placeholder = [field.hasDefault && field.default !== null ? shown(field.default) : "", hint]
    .filter(Boolean).join(" · ");
  return el(multiline ? "textarea" : "input", {
    id, type: multiline ? undefined : "text", rows: multiline ? 2 : undefined, spellcheck: "false",
    autocomplete: "off", inputmode: numeric ? "decimal" : undefined, placeholder: placeholder || undefined,
    "aria-describedby": describedBy,
  });
}

// Put the state's value into the widget (a value outside the choices gets its own, marked option).
function showValue(field, input, value) {
  if (input.tagName !== "SELECT") { input.value = formatValue(field, value); return; }
  const code = value === undefined ? "" : encodeChoice(value);
  if (![...input.options].some((o) => o.value === code)) {
    input.append(el("option", { value: code, text: `${shown(value)} (not a valid choice)`, "data-foreign": "1" }));
  }
  input.value = code;
}

// Picks under a field: "toggle" chips add or remove a name in a list (reward_funcs from the active registry);
// "datalist" offers values to type over (recent values, local models and datasets), and says so under the field
// with a button that shows them all (a datalist alone is invisible until one types).
function pickerFor(field, suggest, input, state) {
  const suggestion = suggest?.(field);
  if (!suggestion || (suggestion.kind !== "datalist" && !suggestion.values.length)) return null;
  if (suggestion.kind === "datalist") return suggestionBox(field, suggest, input, state);
  const current = () => { const v = state.get(field.name); return Array.isArray(v) ? v : v === undefined ? [] : [v]; };
  const chips = suggestion.values.map((name) => el("button", {
    type: "button", class: "chip", text: name, "data-value": name, "aria-pressed": "false",
    onclick: () => {
      const list = current();
      const next = list.includes(name) ? list.filter((n) => n !== name) : [...list, name];
      state.set(field.name, next.length ? next : undefined, "pick");
    } }));
  const box = el("div", { class: "picker", role: "group", "aria-label": suggestion.label },
    el("span", { class: "muted small", text: `${suggestion.label}: ` }), chips);
  box.refresh = () => {
    const list = current();
    for (const chip of chips) chip.setAttribute("aria-pressed", String(list.includes(chip.dataset.value)));
  };
  return box;
}

function suggestionBox(field, suggest, input, state) {
  const listId = idFor("list", field.name);
  const panelId = idFor("suggest", field.name);
  const datalist = el("datalist", { id: listId });
  input.setAttribute("list", listId);
  const toggle = el("button", { type: "button", class: "link suggest-toggle", "aria-expanded": "false",
                                "aria-controls": panelId });
  const panel = el("ul", { id: panelId, class: "suggest-list", hidden: true });
  const box = el("div", { class: "suggest" }, toggle, panel, datalist);
  const draw = () => {
    const values = suggest(field)?.values || [];
    datalist.replaceChildren(...values.map((v) => el("option", { value: v.value, label: v.label })));
    panel.replaceChildren(...values.map((v) => el("li", {},
      el("button", { type: "button", class: "chip", text: v.value, "data-value": v.value,
                     "aria-label": `Use ${v.value} (${v.label})`, onclick: () => {
          state.set(field.name, v.value, "pick");
          panel.hidden = true;
          toggle.setAttribute("aria-expanded", "false");
          input.focus();
        } }), " ", el("span", { class: "muted", text: v.label }))));
    const kinds = [...new Set(values.map((v) => v.label))];
    box.hidden = values.length === 0;
    toggle.textContent = `${values.length} suggestion${values.length === 1 ? "" : "s"} (${kinds.join(", ")})`;
  };
  toggle.addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    toggle.setAttribute("aria-expanded", String(!panel.hidden));
  });
  box.redraw = draw;
  draw();
  return box;
}

export function buildFieldRow(field, { state, onReset, suggest }) {
  const inputId = idFor("in", field.name);
  const helpId = idFor("help", field.name);
  const diagId = idFor("diag", field.name);
  const describedBy = `${helpId} ${diagId}`;
  const input = field.kind === "select" ? choiceInput(field, inputId, describedBy) : textInput(field, inputId, describedBy);
  const read = () => (input.tagName === "SELECT" ? decodeChoice(input.value) : parseText(field, input.value));
  input.addEventListener(input.tagName === "SELECT" ? "change" : "input", () => state.set(field.name, read(), "input"));

  const reset = el("button", { type: "button", class: "reset", text: "reset", hidden: true,
                               "aria-label": `Reset ${field.name} to its default`, onclick: () => onReset(field) });
  const badges = el("span", { class: "badges" },
    field.deprecated ? el("span", { class: "badge deprecated", text: "deprecated" }) : null,
    field.loose ? el("span", { class: "badge loose", text: "not in schema" }) : null);
  const help = el("p", { class: "help", id: helpId },
    field.deprecation ? el("strong", {}, richText(`${field.deprecation} `)) : null,
    richText(field.deprecation === field.description ? "" : field.description || ""),
    field.kind === "select" ? null : el("span", { class: "default", text: ` (${defaultLabel(field)})` }));
  const row = el("div", { class: "field", id: idFor("field", field.name), "data-name": field.name },
    el("div", { class: "field-head" }, el("label", { for: inputId }, el("code", { text: field.name })), badges, reset),
    input, help, el("div", { class: "field-diags", id: diagId }));
  const choiceDoc = field.enumDocs ? el("p", { class: "choice-doc" }) : null;
  if (choiceDoc) help.before(choiceDoc);
  const picker = pickerFor(field, suggest, input, state);
  if (picker) input.after(picker);

  return {
    field, row, input, diagBox: row.querySelector(".field-diags"),
    refresh(fromOwnInput) {
      if (!fromOwnInput) showValue(field, input, state.get(field.name));
      reset.hidden = !state.has(field.name);
      if (choiceDoc) choiceDoc.textContent = input.selectedOptions[0]?.title || "";
      row.classList.toggle("is-set", state.has(field.name));
      picker?.refresh?.();
    },
    refreshPicker() { picker?.redraw?.(); },
  };
}

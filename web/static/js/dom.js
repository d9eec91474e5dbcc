// A tiny element builder. Text is always set as textContent: nothing from a config or a server message is
// ever parsed as HTML.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

// "1 row", "3 rows", "1 copy", "2 copies": a number with its noun, never "1 rows" or "row(s)".
export function count(n, word, many = `${word}s`) {
  return `${n} ${n === 1 ? word : many}`;
}

// `code` spans in descriptions become <code>; everything else stays text.
export function richText(text) {
  return text.split(/(`[^`]+`)/).map((part) =>
    part.length > 2 && part.startsWith("`") && part.endsWith("`") ? el("code", { text: part.slice(1, -1) }) : part);
}

// Element ids from key names (which may be anything in a foreign file).
export function idFor(prefix, name) {
  return `${prefix}-${String(name).replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0).toString(16)}_`)}`;
}

// Ask before something that cannot be taken back: a modal dialog with the question, a confirm and a cancel
// button (Escape cancels). Resolves true when confirmed.
export function ask({ title, text, confirm = "OK", cancel = "Cancel", id = "ask-dialog" }) {
  document.getElementById(id)?.remove();
  return new Promise((resolve) => {
    const done = (answer) => { dialog.close(); dialog.remove(); resolve(answer); };
    const dialog = el("dialog", { id, class: "ask", "aria-labelledby": `${id}-title`, "aria-describedby": `${id}-text` },
      el("h2", { id: `${id}-title`, text: title }),
      el("p", { id: `${id}-text`, text }),
      el("div", { class: "dialog-actions" },
        el("button", { type: "button", class: "primary", id: `${id}-confirm`, text: confirm, onclick: () => done(true) }),
        el("button", { type: "button", id: `${id}-cancel`, text: cancel, onclick: () => done(false) })));
    dialog.addEventListener("cancel", (event) => { event.preventDefault(); done(false); });
    document.body.append(dialog);
    dialog.showModal();
    dialog.querySelector(`#${id}-cancel`).focus();
  });
}

// A select that acts only on a committed choice: a pick with the mouse, or Enter or leaving the select after
// moving through the choices with the keyboard (the arrow keys change a closed select's value at once, and each
// change would otherwise act: reload a schema, rewrite the sharding keys).
export function onCommittedChange(select, act) {
  const NAVIGATION = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"];
  let browsing = false;
  let pending = false;
  const commit = () => { if (pending) { pending = false; act(); } };
  select.addEventListener("keydown", (event) => {
    if (event.key === "Enter") { commit(); return; }
    browsing = NAVIGATION.includes(event.key) || event.key.length === 1;
  });
  select.addEventListener("keyup", () => { browsing = false; });
  select.addEventListener("blur", () => { browsing = false; commit(); });
  select.addEventListener("change", () => {
    if (browsing) { pending = true; return; }
    pending = false;
    act();
  });
}

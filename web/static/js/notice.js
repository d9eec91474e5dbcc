// The notice above the diagnostics: one short message at a time (recipe started, profile detected, draft restored,
// an import with its Undo, an offer), with its buttons.

const $ = (id) => document.getElementById(id);

// A short message above the diagnostics (recipe started, profile detected, draft restored), with its buttons.
export function announce(node) {
  const notice = $("notice");
  const pressed = notice.contains(document.activeElement); // a button of the notice (Undo, an offer) was used
  notice.replaceChildren(...(node ? [node] : []));  // (a null would be written as the text "null")
  notice.hidden = !node;
  // that button went with the old notice: the focus stays on what the notice says now (or, with no notice left,
  // goes to the fields), never dropped to the page's start
  if (pressed) (node ? notice : $("sections")).focus();
}

"""The primary buttons a user sees: the visible `button.primary` in the topmost open dialog, or on the page outside
every dialog when none is open (the form's and the runs page's one-primary-button tests)."""

from __future__ import annotations

PRIMARIES = """() => {
  const open = [...document.querySelectorAll('dialog[open]')];
  const layer = open.length ? open[open.length - 1] : document.body;
  return [...layer.querySelectorAll('button.primary')]
    .filter((b) => b.checkVisibility() && (open.length || !b.closest('dialog')))
    .map((b) => b.id || b.textContent.trim());
}"""


def primaries(page) -> list[str]:
    """The id (else the text) of each primary button the page shows now."""
    return page.evaluate(PRIMARIES)

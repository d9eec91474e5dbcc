"""Fixes as the smallest text edits: the engine edits the file (yamledit keeps comments, order and quoting), and
only the lines that changed are sent back, as one TextEdit per changed run of lines."""

from __future__ import annotations

import difflib

from lsprotocol import types as lsp

from grpo_schema.commands.autofix import safe_fixes
from grpo_schema.commands.migrate import MIGRATION_CODES, migrate_config
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.lines import split_lines
from grpo_schema.engine.yamledit import EditError, apply_fix_to_text, apply_fixes_to_text
from grpo_schema.lsp.analysis import utf16
from grpo_schema.render.text import describe_fix

FIX_ALL_SAFE = "source.fixAll.grpo"
MIGRATE = "source.grpo.migrate"
MIGRATE_IN_RELEASE = "source.grpo.migrate.release"  # keys older than the (older) release judged, moved to it


def text_edits(old: str, new: str) -> list[lsp.TextEdit]:
    """The edits turning `old` into `new`: changed characters within a changed line, whole lines where lines are
    added or removed; each is against the original text, as LSP applies them."""
    a, b = split_lines(old, keepends=True), split_lines(new, keepends=True)
    edits: list[lsp.TextEdit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for kind, (o1, o2), (n1, n2) in _pair_lines(a, b, i1, i2, j1, j2):
            if kind == "line":
                edits.append(_within_line(o1, a[o1], b[n1]))
            else:
                edits.append(_block(a, o1, o2, "".join(b[n1:n2])))
    return edits


def _block(a: list[str], o1: int, o2: int, new_text: str) -> lsp.TextEdit:
    """Lines o1..o2 of `a` replaced by `new_text`. Lines added after the last one are inserted at the end of its
    content ("\nkey: value"), not at the start of a line past it: a position past the last line makes some
    clients (Neovim 0.11) leave a blank line at the end of the file."""
    if o1 == o2 == len(a) and a and new_text:
        last = a[-1]
        body = last.rstrip("\r\n")
        ending = last[len(body) :]
        if ending and new_text.endswith(ending):
            return lsp.TextEdit(
                range=lsp.Range(
                    lsp.Position(len(a) - 1, utf16(body, len(body))), lsp.Position(len(a) - 1, utf16(body, len(body)))
                ),
                new_text=ending + new_text[: -len(ending)],
            )
    return lsp.TextEdit(range=lsp.Range(_position(a, o1), _position(a, o2)), new_text=new_text)


def _pair_lines(
    a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int
) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    """Split a changed block into edited lines (a renamed key: old line <-> new line, in order, when alike) and
    inserted or removed runs of lines."""
    out: list[tuple[str, tuple[int, int], tuple[int, int]]] = []
    i, j = i1, j1
    while i < i2 or j < j2:
        match = next(
            (
                (x, y)
                for x in range(i, i2)
                for y in range(j, j2)
                if difflib.SequenceMatcher(None, a[x], b[y]).quick_ratio() >= 0.6
                and difflib.SequenceMatcher(None, a[x], b[y]).ratio() >= 0.6
            ),
            None,
        )
        x, y = match if match is not None else (i2, j2)
        if x > i or y > j:
            out.append(("block", (i, x), (j, y)))
        if match is None:
            break
        out.append(("line", (x, x + 1), (y, y + 1)))
        i, j = x + 1, y + 1
    return out


def _within_line(line: int, old: str, new: str) -> lsp.TextEdit:
    """The changed middle of one line (`num_generations: 14` -> `16` replaces the `14` only)."""
    old_body, new_body = old.rstrip("\r\n"), new.rstrip("\r\n")
    if old == old_body:  # the file's last line, without a newline: compare the whole lines
        new_body = new
    elif old[len(old_body) :] != new[len(new_body) :]:  # the line ending itself changed: replace the whole line
        return lsp.TextEdit(range=lsp.Range(lsp.Position(line, 0), lsp.Position(line + 1, 0)), new_text=new)
    prefix = 0
    while prefix < min(len(old_body), len(new_body)) and old_body[prefix] == new_body[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(old_body), len(new_body)) - prefix
        and old_body[len(old_body) - 1 - suffix] == new_body[len(new_body) - 1 - suffix]
    ):
        suffix += 1
    start, end = utf16(old_body, prefix), utf16(old_body, len(old_body) - suffix)
    return lsp.TextEdit(
        range=lsp.Range(lsp.Position(line, start), lsp.Position(line, end)),
        new_text=new_body[prefix : len(new_body) - suffix],
    )


def _position(lines: list[str], index: int) -> lsp.Position:
    """The start of line `index`; past a last line without a newline, its end."""
    if index < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
        return lsp.Position(index, 0)
    return lsp.Position(len(lines) - 1, utf16(lines[-1], len(lines[-1])))


def _workspace_edit(uri: str, version: int | None, old: str, new: str) -> lsp.WorkspaceEdit:
    edits = text_edits(old, new)
    return lsp.WorkspaceEdit(
        changes={uri: edits},
        document_changes=[
            lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits
            )
        ],
    )


def fixes_of(diag: lsp.Diagnostic) -> list[Fix]:
    data = diag.data if isinstance(diag.data, dict) else {}
    found = [data.get("fix")] + list(data.get("alternatives") or [])
    return [Fix.from_dict(f) for f in found if isinstance(f, dict)]


def quick_fixes(uri: str, version: int | None, text: str, diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """One action per fix of each diagnostic in range; the first fix of a diagnostic is the preferred one when safe."""
    actions: list[lsp.CodeAction] = []
    for diag in diagnostics:
        for index, fix in enumerate(fixes_of(diag)):
            try:
                edited = apply_fix_to_text(text, fix)
            except EditError:
                continue  # the engine could not make this edit here: offer nothing rather than a wrong edit
            title = f"{diag.code}: {fix.title or describe_fix(fix)}" + ("" if fix.safe else " (review)")
            actions.append(
                lsp.CodeAction(
                    title=title,
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=index == 0 and fix.safe,
                    edit=_workspace_edit(uri, version, text, edited),
                )
            )
    return actions


def source_actions(
    uri: str,
    version: int | None,
    text: str,
    engine: list[Diagnostic],
    only: list[str] | None,
    release: str | None = None,
    profiles: tuple = (),
) -> list[lsp.CodeAction]:
    """'Fix all safe' (what `grpo validate --fix` applies) and 'Migrate this file' (what `grpo migrate --write
    --from RELEASE` writes: the same migrate_config, from the release the file is judged for, so the editor offers
    the whole migration, defaults written out included), and for a file whose keys predate an older release it is
    judged for, 'migrate this file's old keys to TRL RELEASE' (what `grpo migrate --to RELEASE --write` writes);
    each offered only when it changes something."""
    wanted = lambda kind: not only or any(kind.startswith(o) for o in only)  # noqa: E731
    actions = []
    if wanted(FIX_ALL_SAFE):
        fixed, applied, _ = apply_fixes_to_text(text, safe_fixes(engine))
        if applied and fixed != text:
            actions.append(
                lsp.CodeAction(
                    title=f"grpo: fix all safe ({len(applied)})",
                    kind=FIX_ALL_SAFE,
                    edit=_workspace_edit(uri, version, text, fixed),
                )
            )
    if wanted(MIGRATE_IN_RELEASE) and _predates_older_release(engine, release):
        migrated = migrate_config(text, "<editor>", list(profiles), release, release)
        if migrated.done and migrated.text != text:
            title = f"grpo: migrate this file's old keys to TRL {migrated.target} ({len(migrated.done)})"
            edit = _workspace_edit(uri, version, text, migrated.text)
            actions.append(lsp.CodeAction(title=title, kind=MIGRATE_IN_RELEASE, edit=edit))
    if wanted(MIGRATE):
        migrated = migrate_config(text, "<editor>", list(profiles), release)
        if migrated.done and migrated.text != text:
            title = f"grpo: migrate this file to TRL {migrated.target} ({len(migrated.done)})"
            actions.append(
                lsp.CodeAction(title=title, kind=MIGRATE, edit=_workspace_edit(uri, version, text, migrated.text))
            )
    return actions


def _predates_older_release(engine: list[Diagnostic], release: str | None) -> bool:
    """Whether the file has keys the release it is judged for no longer reads, that release older than 1.16 (at
    1.16 'migrate this file' is that migration): then `grpo migrate --to RELEASE` is offered too."""
    from grpo_schema.engine.release import release_surface

    if release is None or release_surface(release) is None:
        return False
    return any(d.code in MIGRATION_CODES and d.fix is not None for d in engine)


def in_range(diag: lsp.Diagnostic, rng: lsp.Range) -> bool:
    return not (diag.range.end.line < rng.start.line or diag.range.start.line > rng.end.line)

"""The edits `grpo migrate` takes from the engine's diagnostics at the target release: every migration fix (GRPO-K002
renamed, GRPO-K003 removed, GRPO-K008 a profile key nothing reads) and every deprecation fix (GRPO-D...), applied
one at a time by yamledit so comments, key order and formatting stay; a removal that needs a person's decision
leaves a comment in the old line's place."""

from __future__ import annotations

import difflib

from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.lines import split_lines
from grpo_schema.engine.loader import load_yaml
from grpo_schema.engine.migrations import MIGRATIONS
from grpo_schema.engine.yamledit import EditError, apply_fix_to_text

# The codes whose fixes migrate makes: keys that predate the release judged (the form's migrate offer reads this
# list from GET /api/v1/trl-versions, so it cannot drift from what migrate does).
MIGRATION_CODES = ("GRPO-K002", "GRPO-K003", "GRPO-K008")  # K008: a profile key nothing reads


def migration_fixes(diagnostics: list[Diagnostic], deprecations: bool = True) -> list[tuple[Diagnostic, Fix]]:
    """The edits migrate makes: every migration fix (safe or not) and every deprecation fix (`deprecations`: at
    1.16; an older release's deprecated keys are still its own to read, so a move to it leaves them)."""
    out = []
    for diag in diagnostics:
        wanted = diag.code in MIGRATION_CODES or (deprecations and diag.code.startswith("GRPO-D"))
        if wanted and diag.fix is not None and all(fix != diag.fix for _, fix in out):
            out.append((diag, diag.fix))
    return out


def _decision_comment(text: str, fix: Fix) -> tuple[int, str] | None:
    """For a removal that needs a person: (0-based line of the removed key, the comment that replaces it)."""
    key = next((k for k in fix.unset if k in MIGRATIONS and not MIGRATIONS[k].safe), None)
    loaded = load_yaml(text)
    position = loaded.positions.keys.get((key,)) if key else None
    if position is None:
        return None
    value = loaded.data.get(key)
    return position[0] - 1, f"# grpo migrate removed `{key}: {value}`: {MIGRATIONS[key].note}"


def migrate_text(
    text: str, diagnostics: list[Diagnostic], deprecations: bool = True
) -> tuple[str, list[str], list[str]]:
    """(new text, what was done, what could not be done), one edit at a time, each verified by yamledit."""
    done, failed = [], []
    for diag, fix in migration_fixes(diagnostics, deprecations):
        decision = _decision_comment(text, fix) if not fix.safe else None
        try:
            text = apply_fix_to_text(text, fix)
        except EditError as exc:
            failed.append(f"{diag.code} {diag.fields[0] if diag.fields else ''}: {exc}")
            continue
        if decision is not None:
            lines = split_lines(text, keepends=True)
            newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
            lines.insert(decision[0], decision[1] + newline)
            text = "".join(lines)
        done.append(f"{diag.code} {fix.title}" + ("" if fix.safe else " (review: see the comment left in the file)"))
    return text, done, failed


def cannot_keep(diagnostics: list[Diagnostic]) -> list[str]:
    """What TRL 1.16 cannot do as the old release did: keys removed without a successor that carries the setting."""
    out = []
    for diag in diagnostics:
        key = diag.fields[0] if diag.fields else ""
        migration = MIGRATIONS.get(key)
        if diag.code == "GRPO-K003" and migration is not None and (not migration.safe or not migration.replacement):
            out.append(f"{key}: {migration.note}")
    return out


def unified_diff(old: str, new: str, path: str) -> str:
    name = path.lstrip("/")
    lines = difflib.unified_diff(
        split_lines(old, keepends=True), split_lines(new, keepends=True), fromfile=f"a/{name}", tofile=f"b/{name}"
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)

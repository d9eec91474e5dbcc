"""`grpo migrate` on a Python script or notebook: each renamed, removed or deprecated GRPOConfig keyword rewritten
where it is written (the keyword, or the key of the dict it comes from), everything else of the file as it was.

The edits are the engine's own migration fixes (GRPO-K002, K003, D...) of each call judged at the target release;
a keyword whose value or place is only known at run time is listed, not edited.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from grpo_schema.dialects.python.calls import Keyword
from grpo_schema.dialects.python.check import check_python
from grpo_schema.dialects.python.reading import CallReading
from grpo_schema.dialects.python.values import Unknown
from grpo_schema.engine.diagnostics import Fix

MIGRATION_CODES = ("GRPO-K002", "GRPO-K003")


@dataclass
class Migrated:
    text: str
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Edit:
    start: tuple[int, int]  # (1-based line, 0-based character column), in the text being edited
    end: tuple[int, int]
    new: str


def migrate_python(data: bytes, path: str, **options: Any) -> Migrated:
    """The file rewritten for the release in options (trl_version; default 1.16)."""
    text = data.decode("utf-8")
    check = check_python(data, path, **options)
    if check.source.notebook:
        return _migrate_notebook(text, check)
    edits: list[_Edit] = []
    migrated = Migrated(text)
    for reading, result in zip(check.calls, check.results):
        edits += _call_edits(reading, result.diagnostics, migrated, text.split("\n"), 0)
    migrated.text = _apply(text, edits)
    return migrated


def _migrate_notebook(text: str, check) -> Migrated:
    migrated = Migrated(text)
    document = json.loads(text)
    by_cell: dict[int, list[_Edit]] = {}
    for reading, result in zip(check.calls, check.results):
        cell_text = check.source.cells[reading.cell]
        offset = reading.call.line - reading.line  # module line - cell line
        by_cell.setdefault(reading.cell, []).extend(
            _call_edits(reading, result.diagnostics, migrated, cell_text.split("\n"), offset)
        )
    if not any(by_cell.values()):
        return migrated
    for cell, edits in by_cell.items():
        new = _apply(check.source.cells[cell], edits)
        lines = new.split("\n")
        document["cells"][cell]["source"] = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    migrated.text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    return migrated


def _call_edits(reading: CallReading, diagnostics, migrated: Migrated, lines: list[str], offset: int) -> list[_Edit]:
    keywords: dict[str, list[Keyword]] = {}
    for kw in reading.call.keywords:  # a name given twice (a TypeError already reported) is edited everywhere
        keywords.setdefault(kw.name, []).append(kw)
    edits: list[_Edit] = []
    seen: list[Fix] = []
    for diag in diagnostics:
        wanted = diag.code in MIGRATION_CODES or diag.code.startswith("GRPO-D")
        if not wanted or diag.fix is None or diag.fix in seen:
            continue
        seen.append(diag.fix)
        name = diag.fields[0] if diag.fields else ""
        for keyword in keywords.get(name, []):
            where = f"line {keyword.line - offset}" + (f" of cell {reading.cell}" if reading.cell is not None else "")
            if keyword.key_span is None or keyword.span is None:
                migrated.failed.append(
                    f"{name} ({where}): it comes from a value built at run time; edit it there: {diag.fix.title}"
                )
                continue
            edit = _edit(keyword, diag.fix, lines, offset)
            if isinstance(edit, str):
                migrated.failed.append(f"{name} ({where}): {edit}")
                continue
            edits += edit
            migrated.done.append(f"{diag.fix.title or name} ({where})")
    return edits


def _edit(keyword: Keyword, fix: Fix, lines: list[str], offset: int) -> list[_Edit] | str:
    key = _range(keyword.key_span, lines, offset)
    value = _range(keyword.span, lines, offset)
    quoted = keyword.via != ""  # a key of a dict literal: a string, written with its quotes
    if fix.rename and not fix.set and not fix.unset:
        return [_Edit(*key, _name(fix.rename[keyword.name], lines, key, quoted))]
    if fix.unset == (keyword.name,) and len(fix.set) == 1:
        ((new_name, new_value),) = fix.set.items()
        if isinstance(keyword.value, Unknown):
            return f"its value is only known at run time ({keyword.value.source}); {fix.title} by hand"
        return [_Edit(*value, repr(new_value)), _Edit(*key, _name(new_name, lines, key, quoted))]
    if fix.unset == (keyword.name,) and not fix.set:
        return [_removal(key, value, lines, keyword.name)]
    return f"{fix.title}: not an edit of this keyword alone; make it by hand"


def _name(new: str, lines: list[str], key: tuple[tuple[int, int], tuple[int, int]], quoted: bool) -> str:
    if not quoted:
        return new
    (line, start), _ = key
    quote = lines[line - 1][start]
    return f"{quote}{new}{quote}"


def _range(span: tuple[int, int, int, int], lines: list[str], offset: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """A span of ast positions (module lines, 1-based UTF-8 byte columns) as (line, character) in `lines`."""
    start_line, start_col, end_line, end_col = span
    first, last = start_line - offset, end_line - offset
    return (first, _chars(lines[first - 1], start_col - 1)), (last, _chars(lines[last - 1], end_col - 1))


def _chars(line: str, byte_offset: int) -> int:
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", "ignore"))


def _removal(key, value, lines: list[str], name: str) -> _Edit:
    """The keyword and its comma; its whole lines (and a comment on them) when nothing else is on them."""
    (first, start), (last, end) = key[0], value[1]
    before, after = lines[first - 1][:start], lines[last - 1][end:]
    rest = after.lstrip()
    if rest.startswith(","):
        rest = rest[1:].lstrip()
    if not before.strip() and (not rest or rest.startswith("#")):  # alone on its lines: kept as a comment
        written = " ".join(line.strip() for line in lines[first - 1 : last])
        return _Edit(
            (first, 0),
            (last, len(lines[last - 1])),
            f"{before}# grpo migrate removed (no longer read by the target TRL release): {written}",
        )
    if not rest:  # last on its line: the comma before it (the previous argument's) stays, the space goes
        return _Edit((first, len(before.rstrip())), (last, len(lines[last - 1])), "")
    tail = len(lines[last - 1]) - len(after) + (len(after) - len(after.lstrip()))
    if after.lstrip().startswith(","):
        tail += 1 + (len(after.lstrip()[1:]) - len(after.lstrip()[1:].lstrip()))
    return _Edit((first, start), (last, tail), "")


def _apply(text: str, edits: list[_Edit]) -> str:
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    out = text
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        a = starts[edit.start[0] - 1] + edit.start[1]
        b = starts[edit.end[0] - 1] + edit.end[1]
        out = out[:a] + edit.new + out[b:]
    return out


def fix_text(text: str, reading: CallReading, fix: Fix, offset: int = 0) -> str | None:
    """A script's text (or a notebook cell's, whose first line is module line `offset` + 1) with one engine fix
    applied to the call it is about (the language server's quick fix), or None when it is not an edit of the call
    as written (a value built at run time)."""
    lines = text.split("\n")
    keywords = {kw.name: kw for kw in reading.call.keywords}
    edits: list[_Edit] = []
    settable = {k: v for k, v in fix.set.items() if not (fix.unset and k not in keywords)}
    if fix.rename or fix.unset:
        for name in [*fix.rename, *fix.unset]:
            keyword = keywords.get(name)
            if keyword is None or keyword.key_span is None or keyword.span is None:
                return None
            edit = _edit(
                keyword,
                Fix(set={k: v for k, v in fix.set.items() if k not in keywords}, unset=fix.unset, rename=fix.rename),
                lines,
                offset,
            )
            if isinstance(edit, str):
                return None
            edits += edit
        settable = {k: v for k, v in fix.set.items() if k in keywords}
    for name, value in settable.items():
        keyword = keywords.get(name)
        if keyword is not None:
            if keyword.span is None:
                return None
            edits.append(_Edit(*_range(keyword.span, lines, offset), repr(value)))
        elif offset:
            return None  # a new line in a notebook cell: left to the notebook's editor
        else:
            edits.append(_insertion(reading, name, value, lines))
    return _apply(text, edits) if edits else None


def _insertion(reading: CallReading, name: str, value: Any, lines: list[str]) -> _Edit:
    """`name=value` added to the call: on a line of its own before the closing parenthesis of a call written over
    several lines (indented as its last argument), else before the parenthesis."""
    call = reading.call
    close = (call.end_line, _chars(lines[call.end_line - 1], call.end_column - 2))
    written = [kw for kw in call.keywords if kw.key_span is not None and kw.line >= call.line]
    if call.end_line > call.line and written and not lines[call.end_line - 1][: close[1]].strip():
        indent = lines[written[-1].line - 1][: _chars(lines[written[-1].line - 1], written[-1].column - 1)]
        return _Edit((call.end_line, 0), (call.end_line, 0), f"{indent}{name}={value!r},\n")
    before = lines[close[0] - 1][: close[1]].rstrip()
    separator = "" if before.endswith(("(", ",")) else ", "
    return _Edit(close, close, f"{separator}{name}={value!r}")

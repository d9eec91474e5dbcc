"""The language server on Python scripts and notebooks: every GRPOConfig(...) call judged by the same engine
(grpo_schema.dialects.python), diagnostics at the keyword arguments, quick fixes that edit the keyword where it
is written, and hover on a keyword (its facts) or on the call (the batch schedule it trains with).

A notebook arrives as its .ipynb JSON text: a finding is placed on the JSON line that holds its cell's line, and
its message names the cell and line. A quick fix in a notebook rewrites the changed lines of the cell, each on its
own JSON line, and is offered where it changes no line count (a new keyword line is left to the notebook's editor).
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types as lsp

from grpo_schema.dialects.python import check_python
from grpo_schema.dialects.python.as_python import script_only_keys
from grpo_schema.dialects.python.check import PythonCheck
from grpo_schema.dialects.python.codes import NO_CALL
from grpo_schema.dialects.python.source import file_line, split_cell_path
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.infile import read_file_settings
from grpo_schema.engine.lines import split_lines
from grpo_schema.lsp.analysis import Analysis, judged_release, to_lsp, utf16
from grpo_schema.lsp.settings import Settings

SUFFIXES = (".py", ".ipynb")
_WORD = re.compile(r"""[A-Za-z_][A-Za-z0-9_]*|"[^"]*"|'[^']*'""")


def is_python(uri: str) -> bool:
    return uri.endswith(SUFFIXES)


def check_python_document(text: str, settings: Settings, uri: str) -> Analysis:
    path = uri.removeprefix("file://") if uri.startswith("file://") else uri
    infile = read_file_settings(text)
    options: dict[str, Any] = {"allow_env": settings.allow_env, **judged_release(settings, uri, infile)}
    if settings.world_size:
        options["default_world_size"] = settings.world_size
    checked = check_python(text, path, **options)
    lines = split_lines(text)  # Python counts lines as editors do: \n, \r\n, \r
    # A Python file without a call is most Python files an editor opens: nothing to say about it there.
    diagnostics = [
        _to_lsp(d, result.path, text, lines)
        for result in checked.results
        for d in result.diagnostics
        if d.code != NO_CALL
    ]
    return Analysis(text, infile, checked.results[0], diagnostics, True, (), python=checked)


def _to_lsp(diag: Diagnostic, result_path: str, text: str, lines: list[str]) -> lsp.Diagnostic:
    _, cell = split_cell_path(result_path)
    if cell is not None and diag.line is not None:  # a notebook: the JSON line of the cell's line
        found = file_line(text, cell, diag.line)
        written = lines[found - 1] if found else ""
        name = next((f for f in diag.fields if f in written), None)  # the field whose keyword is on that line
        column = written.find(name) + 1 if name else 1
        diag = Diagnostic(
            diag.code,
            diag.severity,
            f"cell {cell} line {diag.line}: {diag.message}",
            diag.fields,
            found,
            column if found else None,
            diag.hint,
            diag.fix,
            diag.origin,
            diag.alternatives,
        )
    out = to_lsp(diag, lines)
    if diag.line is not None and diag.line <= len(lines):  # the keyword (or dict key) itself, not a YAML key
        line = lines[diag.line - 1]
        start = (diag.column or 1) - 1
        match = _WORD.match(line, start)
        end = match.end() if match else start + 1
        out.range = lsp.Range(
            lsp.Position(diag.line - 1, utf16(line, start)),  # LSP counts UTF-16 units
            lsp.Position(diag.line - 1, utf16(line, end)),
        )
    return out


def _call_at(checked: PythonCheck, line: int, text: str = "") -> int | None:
    """The index of the call whose text covers 1-based `line` of the document (for a notebook, a line of the
    .ipynb that holds a line of the call's cell)."""
    for index, reading in enumerate(checked.calls):
        first, last = reading.call.line, reading.call.end_line
        if reading.cell is not None:
            if not text:
                continue
            offset = reading.call.line - reading.line
            first = file_line(text, reading.cell, first - offset) or 0
            last = file_line(text, reading.cell, last - offset) or 0
        if first <= line <= last:
            return index
    return None


def _notebook_fix(text: str, checked: PythonCheck, index: int, fix) -> str | None:
    """The .ipynb text with a fix made in a cell: each changed line of the cell rewritten on its own JSON line,
    the rest of the file as Jupyter wrote it (a fix that adds or removes lines is not offered)."""
    import json

    from grpo_schema.dialects.python.migrate import fix_text

    reading = checked.calls[index]
    cell_text = checked.source.cells[reading.cell]
    edited = fix_text(cell_text, reading, fix, reading.call.line - reading.line)
    if edited is None:
        return None
    old, new = cell_text.split("\n"), edited.split("\n")
    if len(old) != len(new):
        return None
    document = text.split("\n")
    for number, (before, after) in enumerate(zip(old, new), start=1):
        if before == after:
            continue
        at = file_line(text, reading.cell, number)
        if at is None:
            return None
        written = document[at - 1]
        indent = written[: len(written) - len(written.lstrip())]
        ending = "\n" if number < len(old) else ""
        comma = "," if written.rstrip().endswith(",") else ""
        document[at - 1] = f"{indent}{json.dumps(after + ending, ensure_ascii=False)}{comma}"
    return "\n".join(document)


def hover(analysis: Analysis, line: int, character: int) -> str | None:
    """On a keyword: what the YAML key's hover says, for the call's release. On the call's name: its schedule."""
    from grpo_schema.lsp import info

    checked: PythonCheck = analysis.python
    index = _call_at(checked, line + 1)
    if index is None:
        return None
    reading, result = checked.calls[index], checked.results[index]
    text = split_lines(analysis.text)[line]
    words = [m for m in _WORD.finditer(text) if m.start() <= character <= m.end()]
    word = words[0].group(0).strip("\"'") if words else ""
    if word in reading.mapping:
        return info.hover_text(word, result, (), "")
    callee = reading.call.callee.split(".")[-1]
    if word == callee or line + 1 == reading.call.line:
        head = f"**{reading.call.callee}(...)**, judged as TRL {result.trl_version} ({result.trl_version_source})"
        return f"{head}\n\n{info.schedule_text(result, 'the editor settings, or 1')}"
    return None


def quick_fixes(uri: str, version: int | None, analysis: Analysis, near: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """Each fix of each diagnostic in range, as an edit of the keyword where it is written."""
    from grpo_schema.dialects.python.migrate import fix_text
    from grpo_schema.engine.diagnostics import Fix
    from grpo_schema.engine.keys import is_launch_key
    from grpo_schema.lsp.edits import _workspace_edit

    checked: PythonCheck = analysis.python
    actions: list[lsp.CodeAction] = []
    for diag in near:
        index = _call_at(checked, diag.range.start.line + 1, analysis.text)
        if index is None:
            continue
        data = diag.data if isinstance(diag.data, dict) else {}
        fixes = [Fix.from_dict(f) for f in [data.get("fix"), *(data.get("alternatives") or [])] if f]
        refused = script_only_keys(checked.results[index].trl_version)  # not GRPOConfig arguments
        for number, fix in enumerate(fixes):
            if set(fix.set) & refused or any(is_launch_key(name) for name in fix.set):
                continue  # the world size is the launcher's, the model and data GRPOTrainer's
            edited = (
                _notebook_fix(analysis.text, checked, index, fix)
                if checked.source.notebook
                else fix_text(analysis.text, checked.calls[index], fix)
            )
            if edited is None or edited == analysis.text:
                continue
            actions.append(
                lsp.CodeAction(
                    title=f"{diag.code}: {fix.title}" + ("" if fix.safe else " (review)"),
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=number == 0 and fix.safe,
                    edit=_workspace_edit(uri, version, analysis.text, edited),
                )
            )
    return actions

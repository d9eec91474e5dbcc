"""What the YAML loader refuses and how it says so: the resource limits, a diagnostic at a parser's mark, a
syntax error (a tab in the indentation, a line YAML 1.1 ends where editors show none), text that is not UTF-8."""

from __future__ import annotations

import codecs
from dataclasses import replace
from typing import Any

import yaml

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.lines import line_starts, split_yaml_lines

MAX_BYTES = 1_000_000
MAX_DEPTH = 50
MAX_VALUES = 50_000  # values after alias expansion; real configs have a few hundred
MAX_INT_CHARS = 1_000  # an integer written with more characters is refused before int() sees it


class Refused(Exception):
    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic


def error(code: str, message: str, mark: Any = None, hint: str = "", fields: tuple[str, ...] = ()) -> Diagnostic:
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
    return Diagnostic(code, "error", message, fields=fields, line=line, column=column, hint=hint)


def syntax_diagnostic(exc: yaml.YAMLError, text: str) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if "\t" in problem or "'\\t'" in problem or (mark is not None and _tab_at(text, mark)):
        return error(
            codes.Y_TAB,
            "a tab character is used for indentation",
            mark,
            "indent with spaces; YAML does not allow tabs in indentation",
        )
    if "nesting depth" in problem:
        return error(codes.Y_TOO_DEEP, "values are nested too deeply", mark, "flatten the structure")
    context = getattr(exc, "context", None)
    message = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
    found = error(codes.Y_SYNTAX, message, mark, _odd_break_hint(text, mark) or "fix the YAML syntax at this position")
    lines = split_yaml_lines(text)  # the parser's mark counts lines as YAML does
    if found.line is not None and lines and found.line > len(lines):
        # The parser stops past the last line at the end of the file: report it at the end of the last line.
        found = replace(found, line=len(lines), column=len(lines[-1]) + 1)
    return found


_BREAK_NAMES = {
    "\u2028": "U+2028 (line separator)",
    "\u2029": "U+2029 (paragraph separator)",
    "\x85": "U+0085 (next line)",
}


def _odd_break_hint(text: str, mark: Any) -> str:
    """When the parser stopped on a line YAML 1.1 started at a character editors show inside a line: say so."""
    if mark is None:
        return ""
    index = min(getattr(mark, "index", 0), len(text)) - mark.column
    odd = text[index - 1] if 0 < index <= len(text) else ""
    if odd not in _BREAK_NAMES:
        return ""
    return (
        f"YAML 1.1 (PyYAML, which trl reads configs with) ends a line at the {_BREAK_NAMES[odd]} here, where "
        "editors show none: remove it, or write it as an escape (\\u2028) inside a double-quoted string"
    )


def _tab_at(text: str, mark: Any) -> bool:
    lines = split_yaml_lines(text)
    if mark.line >= len(lines):
        return False
    line = lines[mark.line]
    return "\t" in line[: len(line) - len(line.lstrip(" \t"))]


def not_utf8(data: bytes, exc: UnicodeDecodeError) -> Diagnostic:
    """Where the first byte that is not UTF-8 is: its line and column (in characters of the valid text before it),
    so that the editor, which shows the file decoded some other way (Latin-1, cp1252), marks the same place."""
    start = exc.start + (3 if data.startswith(codecs.BOM_UTF8) else 0)
    before = data[:start].decode("utf-8", "replace")
    starts = line_starts(before)
    line, column = len(starts), len(before) - starts[-1] + 1
    return Diagnostic(
        codes.Y_ENCODING,
        "error",
        f"the file is not UTF-8 text ({exc.reason} at byte {exc.start}: "
        f"{data[start : start + 1]!r}); trl reads configs as UTF-8",
        line=line,
        column=column,
        hint="save the file as UTF-8 (in the editor: reopen with the encoding it was written in, then save with UTF-8)",
    )

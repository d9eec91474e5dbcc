"""Lines as editors and the Language Server Protocol count them: a line ends at "\\n", "\\r\\n" or a lone "\\r",
and nowhere else.

Python's str.splitlines also breaks at U+2028, U+2029, U+0085, form feed, vertical tab and \\x1c-\\x1e, and
PyYAML (YAML 1.1) counts U+2028, U+2029 and U+0085 as line breaks. Such characters reach configs in prompts pasted
from web pages and JSON, or a cp1252 ellipsis read as Latin-1; counted as breaks, every later line number is one
too high, and an editor's edit lands on the wrong line. Every line number the product reports or reads
(the loader, the engine's comment readers, the language server) goes through here.
"""

from __future__ import annotations

import re
from bisect import bisect_right

_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_KEEPING_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# What str.splitlines breaks at beyond \r and \n: when a text holds none, splitlines is right (and fast).
_EXTRA_PY_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# What YAML 1.1 (PyYAML, libyaml) breaks at beyond \r and \n.
YAML_ONLY_BREAKS = re.compile("[\x85\u2028\u2029]")
_YAML_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_YAML_LINE_KEEPING_END = re.compile(
    "[^\r\n\x85\u2028\u2029]*(?:\r\n|[\r\n\x85\u2028\u2029])|[^\r\n\x85\u2028\u2029]+\\Z"
)


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """text.splitlines(keepends), breaking only at \\n, \\r\\n and \\r."""
    if not _EXTRA_PY_BREAKS.search(text):
        return text.splitlines(keepends)
    if keepends:
        return _LINE_KEEPING_END.findall(text)
    lines = _BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def line_starts(text: str) -> list[int]:
    """The character offset where each line starts (a text ending in a break has an empty last line)."""
    return [0] + [m.end() for m in _BREAK.finditer(text)]


def yaml_line_starts(text: str) -> list[int]:
    """The same as PyYAML counts lines: also after U+0085, U+2028 and U+2029."""
    return [0] + [m.end() for m in _YAML_BREAK.finditer(text)]


def split_yaml_lines(text: str, keepends: bool = False) -> list[str]:
    """text's lines as PyYAML counts them, to index with its marks."""
    if keepends:
        return _YAML_LINE_KEEPING_END.findall(text)
    lines = _YAML_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


class YamlToEditorLines:
    """PyYAML's 0-based (line, column) -> the editor's, for a text where the two count lines differently."""

    def __init__(self, text: str):
        self.length = len(text)
        self.yaml = yaml_line_starts(text)
        self.editor = line_starts(text)

    def __call__(self, line: int, column: int) -> tuple[int, int]:
        if line >= len(self.yaml):  # past the end, where a parser stops: as far past the editor's last line
            return len(self.editor) + line - len(self.yaml), column
        offset = min(self.yaml[line] + column, self.length)
        editor_line = bisect_right(self.editor, offset) - 1
        return editor_line, offset - self.editor[editor_line]

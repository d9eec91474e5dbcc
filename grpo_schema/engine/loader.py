"""YAML text -> plain Python values plus the position of every key, with every resource bounded.

The document is built from PyYAML's event stream (never its recursive composer), so that:
- every mapping key keeps its 1-based line and column (`Positions`);
- duplicate keys, non-string keys, tags and several documents are reported, not silently resolved;
- aliases are counted by the size they expand to and refused past a limit before anything is expanded
  (the "billion laughs" file costs microseconds), recursive aliases are refused, and nesting depth and the
  total number of values are bounded; the file size is checked before parsing.
Scalars are resolved exactly as `yaml.safe_load` resolves them (YAML 1.1: `1e-6` is a string, `no` is false).
The building is in `yaml_build.py`, the key positions in `positions.py`, the limits and what the loader refuses
(syntax errors, tabs, text that is not UTF-8) in `yaml_refusals.py`.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.lines import YAML_ONLY_BREAKS, YamlToEditorLines
from grpo_schema.engine.positions import Positions
from grpo_schema.engine.yaml_build import Builder
from grpo_schema.engine.yaml_refusals import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_VALUES,
    Refused,
    error,
    not_utf8,
    syntax_diagnostic,
)

try:  # the C parser when available: same events, faster
    from yaml.cyaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as _Parser


@dataclass
class LoadResult:
    data: Any = None
    positions: Positions = field(default_factory=Positions)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    ok: bool = True


def _decode(data: bytes) -> str:
    """data.decode("utf-8-sig"), whose codec is Python code (~2 us a call); the same in C: one leading BOM
    dropped, then strict UTF-8, an error's offset counted after the BOM as that codec counts it."""
    return (data[3:] if data.startswith(codecs.BOM_UTF8) else data).decode("utf-8")


def load_yaml(text: str | bytes) -> LoadResult:
    """Parse one YAML document into plain values and key positions; never raises on bad input. Lines are
    counted as editors count them (grpo_schema.engine.lines), also where YAML 1.1 counts more breaks."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            return _refuse(error(codes.Y_TOO_LARGE, f"the file is {len(text)} bytes; the limit is {MAX_BYTES}"))
        try:
            text = _decode(text)
        except UnicodeDecodeError as exc:
            return _refuse(not_utf8(text, exc))
    convert = YamlToEditorLines(text) if YAML_ONLY_BREAKS.search(text) else None
    result = _load(text, convert)
    if convert is not None:
        _reline(result, convert)
    return result


def _reline(result: LoadResult, convert: YamlToEditorLines) -> None:
    """Positions and diagnostics from PyYAML's line count to the editor's (U+2028 and the like end no line)."""

    def moved(line: int, column: int | None) -> tuple[int, int]:
        line, column = convert(line - 1, (column or 1) - 1)
        return line + 1, column + 1

    for table in (result.positions.keys, result.positions.values):
        for path, (line, column) in table.items():
            table[path] = moved(line, column)
    result.diagnostics = [
        d if d.line is None else replace(d, **dict(zip(("line", "column"), moved(d.line, d.column))))
        for d in result.diagnostics
    ]


def _load(text: str, convert: YamlToEditorLines | None) -> LoadResult:
    if len(text) > MAX_BYTES:
        return _refuse(error(codes.Y_TOO_LARGE, f"the file is {len(text)} characters; the limit is {MAX_BYTES}"))
    if "\x00" in text:
        return _refuse(error(codes.Y_ENCODING, "the file contains NUL bytes; it is not a text file"))
    parser = _Parser(text)
    builder = Builder(parser)
    if convert is not None:
        builder.editor_line = lambda line: convert(line - 1, 0)[0] + 1
    try:
        data = builder.build()
    except Refused as refused:
        return _refuse(refused.diagnostic, builder.diagnostics)
    except yaml.YAMLError as exc:
        return _refuse(syntax_diagnostic(exc, text), builder.diagnostics)
    except RecursionError:  # pragma: no cover - the builder is iterative; kept as a last guard
        return _refuse(error(codes.Y_TOO_DEEP, "values are nested too deeply"))
    finally:
        parser.dispose()
    return LoadResult(data=data, positions=builder.positions, diagnostics=builder.diagnostics)


def value_problem(value: Any) -> Diagnostic | None:
    """The loader's bounds, for a value built without it (check_mapping: a JSON body, a Python caller): nesting
    depth and value count (a cycle counts without end), and string keys at the top level. None when it is fine."""
    if isinstance(value, dict) and any(not isinstance(key, str) for key in value):
        key = next(key for key in value if not isinstance(key, str))
        return error(codes.Y_KEY_TYPE, f"the key {key!r} is not a string", hint="write every key as a string")
    stack, count = [(value, 0)], 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            return error(codes.Y_TOO_MANY_KEYS, f"the config holds more than {MAX_VALUES} values")
        if isinstance(item, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                return error(
                    codes.Y_TOO_DEEP,
                    f"values are nested more than {MAX_DEPTH} levels deep",
                    hint="flatten the structure",
                )
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return None


def _refuse(diagnostic: Diagnostic, earlier: list[Diagnostic] | None = None) -> LoadResult:
    return LoadResult(diagnostics=[*(earlier or []), diagnostic], ok=False)

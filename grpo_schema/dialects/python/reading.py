"""One GRPOConfig(...) call as the engine sees it: the mapping of its keyword arguments, where each key is (in
characters, and in its cell's lines for a notebook), and what is known only at run time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grpo_schema.dialects.python.calls import ConfigCall
from grpo_schema.dialects.python.source import Source
from grpo_schema.dialects.python.values import Unknown
from grpo_schema.engine.loader import Positions


@dataclass
class CallReading:
    """One call as the engine sees it: the mapping, where each key is, what is unknown."""

    call: ConfigCall
    cell: int | None
    mapping: dict[str, Any] = field(default_factory=dict)
    positions: Positions = field(default_factory=Positions)
    unknown: dict[str, Unknown] = field(default_factory=dict)
    spans: dict[str, tuple[int, int, int, int] | None] = field(
        default_factory=dict
    )  # value spans, as lines of the file
    key_spans: dict[str, tuple[int, int, int, int] | None] = field(default_factory=dict)
    # name -> (option, default) for an unknown read from the script's own argparse parser (`--lr`, 5e-06)
    defaults: dict[str, tuple[str, Any]] = field(default_factory=dict)
    line: int = 0  # of the call, in its cell for a notebook
    column: int = 0
    opaque: bool = False


def _characters(source: Source, line: int, column: int) -> int:
    """ast's 1-based column (counted in UTF-8 bytes) as a 1-based column in characters, what editors count."""
    lines = source.text.split("\n")
    if not 1 <= line <= len(lines) or lines[line - 1].isascii():
        return column
    return len(lines[line - 1].encode("utf-8")[: column - 1].decode("utf-8", "ignore")) + 1


def _in_characters(call: ConfigCall, source: Source) -> None:
    call.column = _characters(source, call.line, call.column)
    for item in [*call.keywords, *call.opaque]:
        item.column = _characters(source, item.line, item.column)  # the same objects as in duplicates


def read_call(call: ConfigCall, source: Source) -> CallReading:
    _in_characters(call, source)
    cell, line = source.place(call.line)
    reading = CallReading(call, cell, line=line or call.line, column=call.column)
    for kw in call.keywords:
        reading.mapping[kw.name] = kw.value
        if isinstance(kw.value, Unknown):
            reading.unknown[kw.name] = kw.value
        reading.positions.keys[(kw.name,)] = (source.place(kw.line)[1] or kw.line, kw.column)
        reading.spans[kw.name] = kw.span
        reading.key_spans[kw.name] = kw.key_span
    reading.opaque = bool(call.opaque)
    return reading

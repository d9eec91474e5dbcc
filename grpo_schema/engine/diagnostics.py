"""Diagnostics as plain data: one shape for the CLI, the HTTP API and the web form.

A diagnostic says what is wrong (`message`, with the actual values), which keys it is about (`fields`, as written
in the file), where (`line`, `column`, 1-based), what to do (`hint`) and, when the edit is mechanical, a `fix`.
Nothing here renders or raises; renderers live in `grpo_schema.render`.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")

# Where a value came from: the config file, a command-line override, or nowhere (a default).
Origin = Literal["file", "cli", "default"]


@dataclass(frozen=True)
class Fix:
    """A machine-applicable edit. `safe` means applying it cannot change what the user meant."""

    set: dict[str, Any] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    rename: dict[str, str] = field(default_factory=dict)
    safe: bool = True
    title: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "set": dict(self.set),
            "unset": list(self.unset),
            "rename": dict(self.rename),
            "safe": self.safe,
        }
        if self.title:
            out["title"] = self.title
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Fix":
        return cls(
            set=dict(data.get("set") or {}),
            unset=tuple(data.get("unset") or ()),
            rename=dict(data.get("rename") or {}),
            safe=bool(data.get("safe", True)),
            title=str(data.get("title") or ""),
        )


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    fields: tuple[str, ...] = ()
    line: int | None = None
    column: int | None = None
    hint: str = ""
    fix: Fix | None = None
    origin: Origin | None = None
    # Extra fixes beyond the first (e.g. several minimal edits for a batch rule).
    alternatives: tuple[Fix, ...] = ()

    def with_position(self, line: int | None, column: int | None) -> "Diagnostic":
        return replace(self, line=line, column=column)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "fields": list(self.fields),
            "line": self.line,
            "column": self.column,
            "hint": self.hint,
            "fix": self.fix.to_dict() if self.fix else None,
        }
        if self.origin:
            out["origin"] = self.origin
        if self.alternatives:
            out["alternatives"] = [alt.to_dict() for alt in self.alternatives]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Diagnostic":
        fix = data.get("fix")
        return cls(
            code=data["code"],
            severity=data["severity"],
            message=data["message"],
            fields=tuple(data.get("fields") or ()),
            line=data.get("line"),
            column=data.get("column"),
            hint=data.get("hint") or "",
            fix=Fix.from_dict(fix) if fix else None,
            origin=data.get("origin"),
            alternatives=tuple(Fix.from_dict(a) for a in data.get("alternatives") or ()),
        )


def has_errors(diagnostics: list[Diagnostic], strict: bool = False) -> bool:
    """True when any diagnostic is an error (or, with strict, a warning)."""
    failing = ("error", "warning") if strict else ("error",)
    return any(d.severity in failing for d in diagnostics)


def show_value(value: Any) -> str:
    """A value as the user wrote it in YAML terms: strings quoted, booleans lower-case, None as null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return repr(text)
    if isinstance(value, datetime.date):  # YAML reads 2024-01-31 as a date: show it as written
        return f"the date {value.isoformat()}"
    if isinstance(value, (list, tuple)):
        if any(isinstance(item, datetime.date) for item in value):
            return "a list" if len(value) > 4 else "[" + ", ".join(show_value(item) for item in value) + "]"
        return "a list" if len(repr(value)) > 60 else repr(list(value))
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def yaml_value(value: Any) -> str:
    """A value as it would be written after `key: ` in YAML: plain words unquoted, other strings double-quoted,
    lists and mappings in flow style, dates as dates and non-finite floats as .nan / .inf, at any depth."""
    import json
    import math
    import re

    if isinstance(value, str):
        plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_./-]*", value) and value.lower() not in (
            "true",
            "false",
            "yes",
            "no",
            "on",
            "off",
            "null",
            "y",
            "n",
        )
        return value if plain else json.dumps(value)
    if value is None or isinstance(value, bool):
        return show_value(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_value(str(k))}: {yaml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))

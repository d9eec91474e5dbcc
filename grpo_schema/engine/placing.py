"""Where each diagnostic points and the order they are listed in: fields renamed to the keys as written, each
given its line (or the command line it came from), messages clipped, errors of the earlier phases first."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from grpo_schema.engine.diagnostics import Diagnostic

if TYPE_CHECKING:
    from grpo_schema.engine.check import CheckResult


def path_of(name: str) -> tuple[str | int, ...]:
    """'datasets[0].path' -> ('datasets', 0, 'path'); 'env.HF_HOME' -> ('env', 'HF_HOME')."""
    if name.startswith("env."):  # a variable name is one key, whatever it contains ('env.A.B' is refused by name)
        return ("env", name[4:])
    parts: list[str | int] = []
    for piece in name.replace("]", "").split("."):
        head, *indices = piece.split("[")
        parts.append(head)
        parts.extend(int(i) for i in indices if i.isascii() and i.isdigit())  # '²' is a digit int() refuses
    return tuple(parts)


def place(result: CheckResult, written_as: dict[str, str], origins: dict[str, str]) -> None:
    """Rename fields to the keys as written, then give each diagnostic its line and origin."""
    placed = []
    for diag in result.diagnostics:
        fields = tuple(written_as.get(f, f) for f in diag.fields) if written_as else tuple(diag.fields)
        line, column, origin = diag.line, diag.column, diag.origin
        for name in fields:
            if origins and _set_on_command_line(name, origins):
                origin = "cli"
                break
            # A top-level key written with '.' or '[' (model.name: x) is found as written, not as a path.
            position = result.positions.keys.get((name,)) or result.positions.of(path_of(name))
            if position and line is None:
                line, column = position
                origin = origin or "file"
                break
        placed.append(
            Diagnostic(
                diag.code,
                diag.severity,
                diag.message,
                fields,
                line,
                column,
                diag.hint,
                diag.fix,
                origin,
                diag.alternatives,
            )
        )
    result.diagnostics = placed


def _set_on_command_line(name: str, origins: dict[str, str]) -> bool:
    """Whether the key a field belongs to ('datasets' for 'datasets[0].path') came from the command line."""
    return (name if name in origins else name.split(".")[0].split("[")[0]) in origins


_PHASE = {"Y": 0, "K": 1, "T": 2, "E": 3}


def finish(result: CheckResult) -> CheckResult:
    def order(d: Diagnostic) -> tuple[int, int, int]:
        phase = _PHASE.get(d.code[5:6], 4)
        return (phase, d.line if d.line is not None else 1 << 30, ("error", "warning", "info").index(d.severity))

    result.diagnostics = sorted((bounded(d) for d in result.diagnostics), key=order)
    return result


MAX_TEXT = 2_000  # messages and hints quote values: a 1 MB reward name made a 1 MB message (twice, with the hint)


def bounded(d: Diagnostic) -> Diagnostic:
    if len(d.message) <= MAX_TEXT and len(d.hint) <= MAX_TEXT:
        return d
    return replace(d, message=_clip(d.message), hint=_clip(d.hint))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."

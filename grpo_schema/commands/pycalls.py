"""`--call N`: which GRPOConfig(...) calls of a .py script or .ipynb notebook a command judges.

Every command that reads a Python file judges every call of it (a file with two configs gets both) unless --call
picks one, counted from 1 in file order, as `grpo export` counts them. One definition, so plan, doctor, explain
and export name and refuse a call the same way.
"""

from __future__ import annotations

import argparse
from typing import Any

from grpo_schema.commands.options import PYTHON_SUFFIXES, UsageError
from grpo_schema.engine.words import plural

CALL_HELP = (
    "which GRPOConfig(...) call of a .py or .ipynb file, counting from 1 in file order (default: every "
    "call, each judged on its own)"
)


def add_call(parser: argparse.ArgumentParser, help: str = CALL_HELP) -> None:
    parser.add_argument("--call", type=int, default=None, metavar="N", help=help)


def is_python(path: str) -> bool:
    return path.endswith(PYTHON_SUFFIXES)


def where(reading: Any) -> str:
    """'line 12' or 'line 3 of cell 5': where a call starts, as its diagnostics number it."""
    return f"line {reading.line}" + (f" of cell {reading.cell}" if reading.cell is not None else "")


def listed(checked: Any) -> str:
    return ", ".join(f"{i + 1}: {where(c)}" for i, c in enumerate(checked.calls))


def chosen_calls(checked: Any, call: int | None, path: str) -> list[int]:
    """The indexes of the calls to judge: every call, or the one --call names (a UsageError naming the calls
    the file has when it has no such call)."""
    count = len(checked.calls)
    if call is None:
        return list(range(count))
    if not 1 <= call <= count:
        have = plural(count, "GRPOConfig(...) call") + (f" ({listed(checked)})" if count else "")
        raise UsageError(f"--call {call}: {path} has {have}")
    return [call - 1]


def call_name(checked: Any, index: int) -> str:
    """'call 2 of 3, line 12': how a command's output names one call of several (empty for a file's only call)."""
    count = len(checked.calls)
    return "" if count <= 1 else f"call {index + 1} of {count}, {where(checked.calls[index])}"


def refuse_call_for_yaml(call: int | None, path: str) -> None:
    if call is not None and not is_python(path):
        raise UsageError(f"--call picks a GRPOConfig(...) call of a .py or .ipynb file; {path} is one config")

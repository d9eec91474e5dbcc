"""Human-readable diagnostics, compiler style: location, code, message, the source line, help and fix."""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO

from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.diagnostics import Diagnostic, Fix, yaml_value
from grpo_schema.engine.lines import split_lines
from grpo_schema.versions.detect import RELEASE_SOURCES  # why a release was judged, in words (migrate reads it here)

_COLORS = {"error": "31", "warning": "33", "info": "36", "dim": "2", "bold": "1"}


def use_color(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


# C0 and C1 controls, DEL, and the bidirectional overrides and isolates: text from a config (a key, a value in a
# message, a file name) must not move the cursor, recolour the terminal or reorder what the reader sees.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def printable(text: str) -> str:
    """Text for a terminal, with every control character spelled as an escape (\\x1b, \\u202e, ...)."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_COLORS[style]}m{text}\x1b[0m" if color else text


def describe_fix(fix: Fix) -> str:
    parts = [f"set {k}: {yaml_value(v)}" for k, v in fix.set.items()]
    parts += [f"rename {old} to {new}" for old, new in fix.rename.items()]
    parts += [f"remove {k}" for k in fix.unset if k not in fix.set]
    return "; ".join(parts) or fix.title


def render_diagnostic(diag: Diagnostic, path: str, lines: list[str], color: bool = False) -> str:
    where = printable(path) + (f":{diag.line}:{diag.column}" if diag.line else "")
    origin = " (from the command line)" if diag.origin == "cli" else ""
    head = f"{where}: {_paint(diag.severity, diag.severity, color)}[{diag.code}] {printable(diag.message)}{origin}"
    out = [head]
    if diag.line and 0 < diag.line <= len(lines):
        raw = lines[diag.line - 1].rstrip("\n")
        gutter = f"{diag.line:>5} | "
        text = printable(raw)
        out.append(_paint(gutter, "dim", color) + text)
        start = len(printable(raw[: max((diag.column or 1) - 1, 0)]))  # the caret under the escaped text
        # The key: up to its ':' in YAML, its '=' for a Python keyword argument.
        key_width = max(len(re.split(r"[:=]", text[start:], maxsplit=1)[0].rstrip()), 1)
        out.append(_paint(" " * 6 + "| ", "dim", color) + " " * start + _paint("^" * key_width, diag.severity, color))
    if diag.hint:
        out.append(f"  help: {printable(diag.hint)}")
    if diag.fix:
        out.append(f"  fix{' (safe)' if diag.fix.safe else ''}: {printable(describe_fix(diag.fix))}")
    for alt in diag.alternatives:
        out.append(f"  or: {printable(describe_fix(alt))}")
    return "\n".join(out)


def summary(result: CheckResult) -> str:
    counts = {s: sum(d.severity == s for d in result.diagnostics) for s in ("error", "warning", "info")}
    words = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n]
    refused = [d for d in result.diagnostics if d.severity == "error"]
    verdict = f"{'valid' if result.valid else 'invalid'} at world size {result.world_size}"
    if refused and all(d.code.startswith("GRPO-U") for d in refused):  # the runtime's refusals of a valid config
        verdict = (
            f"valid at world size {result.world_size}, but grpo_runtime refuses {len(refused)} "
            f"setting{'s' if len(refused) != 1 else ''}"
        )
    return f"{printable(result.path)}: {verdict}" + (f" ({', '.join(words)})" if words else "") + judged_for(result)


def release_reason(version: str, source: str) -> str:
    """'TRL 0.19.1 (the trl installed beside this Python)'."""
    return f"TRL {version} ({RELEASE_SOURCES.get(source, source)})"


def judged_for(result: CheckResult) -> str:
    """'; judged as TRL 0.19.1 (the trl installed beside this Python)': always said, 1.16 included, so that a
    reader knows which release's rules the verdict is (and which release to name when it is not theirs)."""
    if result.trl_version_source == "verl":  # a verl launch script or YAML (grpo_schema.dialects.verl)
        how = {
            "flag": "--verl-version",
            "comment": "the file's # grpo: comment",
            "requirements": "the file's verl== pin",
        }.get(result.sources.get("verl_version", ""), "the dialect's field table")
        return f"; judged as verl {result.trl_version} ({how})"
    return f"; judged as {release_reason(result.trl_version, result.trl_version_source)}"


def render(results: list[CheckResult], sources: dict[str, str], stream: TextIO = sys.stdout) -> str:
    color = use_color(stream)
    blocks = []
    for result in results:
        lines = split_lines(sources.get(result.path, ""))
        blocks += [render_diagnostic(d, result.path, lines, color) for d in result.diagnostics]
        blocks.append(summary(result) + "".join(f"\n  {printable(line)}" for line in result.memory_lines))
    return "\n\n".join(blocks) + "\n"

"""`grpo validate --fix`: apply the safe fixes in place, then check again and report what is left.

A fix is safe when applying it cannot change what the user meant (a rename TRL made, a removed key TRL no longer
reads, quoting a number in env). Batch edits and other judgement calls are unsafe and stay as suggestions.
The file is edited surgically (grpo_schema.engine.yamledit): comments, order and formatting elsewhere are untouched.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.yamledit import apply_fixes_to_text
from grpo_schema.render.text import describe_fix


def safe_fixes(diagnostics: list[Diagnostic]) -> list[Fix]:
    """The safe fixes, once each, in the order of the diagnostics (renames and removals come first)."""
    out: list[Fix] = []
    for diag in diagnostics:
        if diag.fix is not None and diag.fix.safe and diag.fix not in out:
            out.append(diag.fix)
    return out


def fix_file(path: str, data: bytes, result: Any, options: dict[str, Any]) -> tuple[bytes, Any]:
    """Apply `result`'s safe fixes to the file at `path`; returns the new bytes and the new check result."""
    from grpo_schema.engine.validate import check_text

    fixes = safe_fixes(result.diagnostics)
    if not fixes:
        return data, result
    text = data.decode("utf-8")
    edited, applied, skipped = apply_fixes_to_text(text, fixes)
    for fix, why in skipped:
        print(f"{path}: not fixed automatically: {describe_fix(fix)} ({why})", file=sys.stderr)
    if not applied:
        return data, result
    new_data = edited.encode("utf-8")
    Path(path).write_bytes(new_data)
    print(
        f"{path}: applied {len(applied)} safe fix{'es' if len(applied) != 1 else ''}: "
        + "; ".join(describe_fix(fix) for fix in applied),
        file=sys.stderr,
    )
    return new_data, check_text(new_data, path=result.path, **options)

"""check_file / check_text / check_mapping as `grpo validate` runs them: the check, then checked fixes.

The checker (grpo_schema.engine.check) reports every diagnostic; for a broken batch geometry (GRPO-B001..B004)
this module then attaches the minimal edits that repair it (grpo_schema.engine.fixes). The fix search re-runs
the checker on each candidate edit, so it sits above the checker and this module above both.
`suggest_fixes=False` skips the search (the plan command, the world-size matrix and the fix search itself).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

from grpo_schema.engine import check
from grpo_schema.engine.check import CheckResult, resolve_profiles
from grpo_schema.engine.placing import bounded

BATCH_FIX_CODES = ("GRPO-B001", "GRPO-B002", "GRPO-B003", "GRPO-B004")


def check_file(path: str | Path, **options: Any) -> CheckResult:
    """Validate a YAML or JSON file. Raises OSError when the file cannot be read."""
    data = Path(path).read_bytes()
    return check_text(data, path=str(path), **options)


def check_text(text: str | bytes, path: str = "<string>", **options: Any) -> CheckResult:
    """The file's `# grpo:` settings are read once, under the explicit options (check.file_options), so the fix
    search checks its edits with the same profiles and world size."""
    options, problems = check.file_options(text, options)
    return _with_fixes(functools.partial(check.check_text_as, problems=problems), text, path, options)


def check_mapping(mapping: Any, path: str = "<mapping>", **options: Any) -> CheckResult:
    return _with_fixes(check.check_mapping, mapping, path, options)


def _with_fixes(run: Callable[..., CheckResult], source: Any, path: str, options: dict[str, Any]) -> CheckResult:
    suggest = options.pop("suggest_fixes", True)
    result = run(source, path, **options)
    if suggest and result.config is not None and any(d.code in BATCH_FIX_CODES for d in result.diagnostics):
        from grpo_schema.engine.fixes import attach_batch_fixes  # a valid file never pays for the fix search

        # Resolved again rather than carried on the result: the check already resolved (and vetted) the same
        # names, so this returns the same Profile objects.
        active = resolve_profiles(options.get("profiles", ()), allow_import=options.get("allow_profile_import", False))
        attach_batch_fixes(result, active, tuple(options.get("allow_env", ())))
        result.diagnostics = [bounded(d) for d in result.diagnostics]  # the fix search rewrote hints
    return result

"""What grpo_runtime runs, refuses or warns about, for every field of a config, decided before anything loads.

    from grpo_runtime.support import assess, enforce
    assess(check_result, "launch")   # coded GRPO-U diagnostics for a valid config (torch-free)
    enforce(config, world_size)      # raise CannotRun on a refusal (Python callers of train.main)

The table itself is `grpo_runtime.support.fields` (one module per area of settings); `docs/runtime-fields.md` is
generated from it. It sits above the stages it describes: each predicate that needs a stage's knowledge is
imported from that stage, never the other way round.
"""

from grpo_runtime.common import CATEGORIES, CannotRun, Setting, Support
from grpo_runtime.support.assessment import (
    assess,
    enforce,
    findings,
    is_set,
    script_of,
    script_refusals,
    setting_of,
    table,
)

__all__ = [
    "CATEGORIES",
    "CannotRun",
    "Setting",
    "Support",
    "assess",
    "enforce",
    "findings",
    "is_set",
    "script_of",
    "script_refusals",
    "setting_of",
    "table",
]

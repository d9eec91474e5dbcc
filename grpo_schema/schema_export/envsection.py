"""The `env:` mapping: variable names to string values, without the names the validator refuses by default.

grpo_schema.engine.env refuses variables that can hijack the training processes (LD_PRELOAD, PYTHONPATH, ...) and
secrets (*_TOKEN, *_API_KEY, ...) unless `--allow-env NAME` allows them. The schema cannot know about that
option, so it refuses them like the default does; the regular expression is built from the same tables.
"""

from __future__ import annotations

import re
from typing import Any

_EXAMPLES = {"HF_HOME": "/data/hf", "WANDB_PROJECT": "grpo", "OMP_NUM_THREADS": "8"}


def _any_case(text: str) -> str:
    """A regex fragment matching `text` in any letter case (ECMA-262 patterns in JSON Schema have no flags)."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in text)


def refused_names_pattern() -> str:
    """Valid variable names that are neither hijacking nor secret, as one lookahead-guarded pattern."""
    from grpo_schema.engine.env import HIJACK_NAMES, HIJACK_PREFIXES, SECRET_WORDS

    names = sorted({_any_case(n) for n in HIJACK_NAMES})
    prefixes = [_any_case(p) for p in HIJACK_PREFIXES]
    secrets = "|".join(_any_case(w) for w in SECRET_WORDS)  # whole underscore-separated words, as in env.py
    return (
        f"^(?!(?:{'|'.join(names)})$)(?!(?:{'|'.join(prefixes)}))(?!(?:.*_)?(?:{secrets})(?:_|$))"
        "[A-Za-z_][A-Za-z0-9_]*$"
    )


def env_property(lenient: bool) -> dict[str, Any]:
    description = (
        "Environment variables set in every training process before anything is built (TRL's `env:`). "
        "Values must be strings: quote numbers and booleans."
    )
    names: dict[str, Any] = (
        {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
        if lenient
        else {
            "pattern": refused_names_pattern(),
            "patternErrorMessage": "not a valid variable name, or a variable that can hijack the training processes "
            "or holds a secret (GRPO-E003/GRPO-E004/GRPO-E005; `grpo validate --allow-env NAME`)",
        }
    )
    return {
        "type": "object",
        "title": "Env",
        "description": description,
        "markdownDescription": description + "\n\n**Example:** `env: {HF_HOME: /data/hf}`\n\n"
        "**Checked by:** `GRPO-E001`..`GRPO-E005`. `grpo codes CODE` explains each.",
        "propertyNames": names,
        "additionalProperties": {"type": "string", "errorMessage": "env values must be strings (GRPO-E002)"},
        "default": {},
        "examples": [_EXAMPLES],
    }

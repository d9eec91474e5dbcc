"""The values a TRL release accepts for a choice-like key, and the verdict on a value written for it.

TRL 1.16's checker knows 1.16's value lists (transformers 5.23's optimizers and schedules, 1.16's loss types, ...).
Another release accepts its own: its trainer's checks (loss_type, scale_rewards; trainer.json) and the value lists
of its table (the enums of the transformers of its date: OptimizerNames, SchedulerType, IntervalStrategy, ...;
TRL's own Literal and metadata choices). TRL 0.14's transformers still has adamw_hf, which 5.23 lacks; 0.16's lacks
cosine_warmup_with_min_lr and stable_adamw, which 1.16 accepts. Every surface (the check, the per-release schemas,
the language server's completion) asks here.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from grpo_schema.engine import codes
from grpo_schema.engine.diagnostics import Diagnostic, Fix, show_value

if TYPE_CHECKING:
    from grpo_schema.versions import ReleaseSurface

LONG_LIST = 12  # past this many values a message names the first few and the count


def accepted_values(key: str, release: ReleaseSurface) -> tuple[str, ...] | None:
    """The string values `release` accepts for `key`: its trainer's check where it has one, else its table's value
    list; None where the release takes any string (or does not read the key)."""
    if key in release.choices:
        return tuple(release.choices[key])
    info = release.fields.get(key)
    if info is None or not info.choices:
        return None
    return tuple(c for c in info.choices if isinstance(c, str)) or None


def whose(key: str, release: ReleaseSurface) -> str:
    """Who accepts the values: 'TRL 0.16.1 accepts with transformers 4.50.3' for a TrainingArguments key (its
    table's transformers), else 'TRL 0.16.1 accepts'."""
    info = release.fields.get(key)
    if key not in release.choices and info is not None and info.source == "TrainingArguments":
        return f"TRL {release.release} accepts with transformers {release.transformers}"
    return f"TRL {release.release} accepts"


def accepted_by(key: str, release: ReleaseSurface) -> str:
    """The text for a value 1.16 has no words for: who accepts it in this release."""
    if key in release.choices:
        return f"Accepted by TRL {release.release}'s trainer."
    return "Accepted by " + whose(key, release).replace(" accepts", "", 1) + "."


def listed(key: str, values: tuple[str, ...], release: ReleaseSurface) -> str:
    """'one of the 41 names TRL 0.16.1 accepts with transformers 4.50.3 (adamw_torch, ...)'."""
    if len(values) > LONG_LIST:
        return f"one of the {len(values)} names {whose(key, release)} ({', '.join(values[:4])}, ...)"
    return f"one of the values {whose(key, release)}: {', '.join(values)}"


def takes_any_text(key: str, release: ReleaseSurface) -> bool:
    """A TrainingArguments key whose names are only documented (metadata choices, no Enum to convert to) and no
    trainer check: the release's parser takes any string for it (half_precision_backend up to 0.26)."""
    info = release.fields.get(key)
    return key not in release.choices and info is not None and info.source == "TrainingArguments" and not info.enum


def choice_refused(key: str, value: Any, release: ReleaseSurface, read_by_116: bool = True) -> Diagnostic | None:
    """GRPO-T003 for a string `release` does not accept for `key` (read from its table's value list), with a
    did-you-mean and a fix from that list; None where it accepts the value or the key takes any string. A key 1.16
    no longer reads whose names the release only documents gets GRPO-T014, a warning: its parser takes the value
    and its Trainer ignores it (a key 1.16 reads keeps 1.16's error, as 1.16 judges it)."""
    allowed = accepted_values(key, release)
    if allowed is None or not isinstance(value, str) or value in allowed:
        return None
    info = release.fields.get(key)
    if info is not None and info.nullable and value.strip().lower() in ("none", "null"):
        return None
    said = f"{key} must be {listed(key, allowed, release)} (got {show_value(value)})"
    match = difflib.get_close_matches(value, allowed, n=1, cutoff=0.6)
    if match:
        hint = f"did you mean {match[0]}?"
        fix = Fix(set={key: match[0]}, safe=False, title=f"use {match[0]}")
    else:
        hint, fix = f"use one of {', '.join(allowed)}, or run a TRL release that has {value}", None
    if not read_by_116 and takes_any_text(key, release):
        said = (
            f"{key} {show_value(value)} is none of the names TRL {release.release}'s Trainer acts on "
            f"({', '.join(allowed)}): its parser takes the text and the setting does nothing"
        )
        hint = hint if match else f"use one of {', '.join(allowed)}"
        return Diagnostic(codes.T_UNLISTED, "warning", said, fields=(key,), hint=hint, fix=fix)
    return Diagnostic(codes.T_CHOICE, "error", said, fields=(key,), hint=hint, fix=fix)


def kept_for_release(key: str, value: Any, release: ReleaseSurface, facts: dict[str, Any] | None) -> bool:
    """Whether `value` is one the release accepts for `key` and TRL 1.16's types cannot hold (adamw_hf at 0.14,
    adamw_apex_fused up to 1.3, ccl as ddp_backend): the checker must not refuse it."""
    allowed = accepted_values(key, release)
    if allowed is None or not isinstance(value, str) or value not in allowed or facts is None:
        return False
    return bool(facts.get("only_choices")) and value not in [str(c) for c in facts.get("choices", ())]

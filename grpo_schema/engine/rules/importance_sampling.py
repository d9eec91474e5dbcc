"""Importance sampling: clip bounds and modes of the vLLM correction, and the off-policy mask."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.rules import Finding, RuleContext, has_or_have, rule

_BOUNDS = ("vllm_importance_sampling_clip_min", "vllm_importance_sampling_clip_max", "vllm_importance_sampling_cap")


def effective_clip_max(config: Any) -> float | None:
    # TRL lets the deprecated cap override clip_max.
    cap = config.vllm_importance_sampling_cap
    return cap if cap is not None else config.vllm_importance_sampling_clip_max


@rule("GRPO-I001", "error", _BOUNDS)
def is_clip_bounds_ordered(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """vllm_importance_sampling_clip_min must be below vllm_importance_sampling_clip_max.

    The correction ratio is truncated or masked to [clip_min, clip_max]; TRL refuses an empty range, whether or
    not vLLM is used.
    """
    low, high = config.vllm_importance_sampling_clip_min, effective_clip_max(config)
    if low is not None and high is not None and low >= high:
        high_name = (
            "vllm_importance_sampling_cap"
            if config.vllm_importance_sampling_cap is not None
            else "vllm_importance_sampling_clip_max"
        )
        yield Finding(
            f"vllm_importance_sampling_clip_min ({low:g}) must be less than {high_name} ({high:g})",
            ("vllm_importance_sampling_clip_min", high_name),
            hint="lower clip_min or raise clip_max",
        )


@rule("GRPO-I002", "error", _BOUNDS + ("vllm_importance_sampling_correction", "vllm_importance_sampling_mode"))
def truncation_needs_a_bound(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """The *_truncate modes need at least one clip bound.

    Truncation clamps the ratio into [clip_min, clip_max]; with both bounds null there is nothing to clamp to.
    """
    mode = config.vllm_importance_sampling_mode
    if (
        config.vllm_importance_sampling_correction
        and mode.endswith("_truncate")
        and config.vllm_importance_sampling_clip_min is None
        and effective_clip_max(config) is None
    ):
        yield Finding(
            f"vllm_importance_sampling_mode {mode} needs vllm_importance_sampling_clip_min or "
            "vllm_importance_sampling_clip_max",
            ("vllm_importance_sampling_mode", "vllm_importance_sampling_clip_max"),
            hint="set vllm_importance_sampling_clip_max: 3.0",
            fix=Fix(set={"vllm_importance_sampling_clip_max": 3.0}, safe=False, title="use clip_max 3.0"),
        )


@rule(
    "GRPO-I003",
    "error",
    ("loss_type", "use_vllm", "vllm_importance_sampling_correction", "vllm_importance_sampling_mode"),
)
def vespo_needs_token_correction(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """vespo with vLLM's importance-sampling correction needs a token-level mode.

    vespo folds the token-level correction ratios into its sequence weight; TRL refuses the sequence_* modes
    (including the default sequence_mask) at trainer start.
    """
    mode = config.vllm_importance_sampling_mode
    if (
        config.loss_type == "vespo"
        and config.use_vllm
        and config.vllm_importance_sampling_correction
        and mode not in ("token_truncate", "token_mask")
    ):
        yield Finding(
            f"loss_type vespo with vLLM importance-sampling correction needs vllm_importance_sampling_mode "
            f"token_truncate or token_mask (got {mode})",
            ("vllm_importance_sampling_mode", "loss_type", "use_vllm"),
            hint="set vllm_importance_sampling_mode: token_mask",
            fix=Fix(set={"vllm_importance_sampling_mode": "token_mask"}, safe=False, title="use token_mask"),
        )


@rule("GRPO-I004", "warning", ("use_vllm", "vllm_importance_sampling_mode", "vllm_importance_sampling_clip_min"))
def correction_settings_without_vllm(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """vLLM importance-sampling settings are set without use_vllm.

    The correction compares vLLM's sampling log-probs with the trainer's; without vLLM these settings do nothing.
    """
    names = [
        n
        for n in (
            "vllm_importance_sampling_mode",
            "vllm_importance_sampling_clip_min",
            "vllm_importance_sampling_clip_max",
            "vllm_importance_sampling_cap",
        )
        if n in ctx.explicit
    ]
    if not config.use_vllm and names:
        yield Finding(
            f"{', '.join(names)} {has_or_have(names)} no effect without use_vllm",
            tuple(names),
            hint="set use_vllm: true, or remove these keys",
        )

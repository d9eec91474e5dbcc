"""Loss: combinations of loss_type, clipping and KL settings."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.rules import Finding, RuleContext, has_or_have, rule

_CLIPPED = ("grpo", "bnpo", "dr_grpo", "dapo", "luspo")


@rule("GRPO-L001", "error", ("loss_type", "epsilon", "epsilon_high"))
def epsilon_high_not_below_epsilon(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """epsilon_high must not be below epsilon.

    The clip range is [1 - epsilon, 1 + epsilon_high]; 'clip-higher' (DAPO) raises the upper bound. An upper bound
    below the lower one is almost always epsilon and epsilon_high swapped. (For cispo epsilon_high is an absolute
    cap on the ratio, and for sapo and vespo it is unused, so this rule does not apply to them.)
    """
    if config.loss_type in _CLIPPED and config.epsilon_high is not None and config.epsilon_high < config.epsilon:
        yield Finding(
            f"epsilon_high ({config.epsilon_high:g}) is below epsilon ({config.epsilon:g}): the upper "
            "clip bound would be tighter than the lower one",
            ("epsilon_high", "epsilon"),
            hint=f"swap them, or set epsilon_high >= {config.epsilon:g} (DAPO uses 0.28 with 0.2)",
        )


@rule("GRPO-L002", "warning", ("loss_type", "importance_sampling_level"))
def loss_type_matches_ratio_level(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """loss_type and importance_sampling_level do not fit together.

    luspo is designed for sequence-level ratios and vespo for token-level ratios; bnpo, dr_grpo, dapo and cispo
    with sequence-level ratios weigh each sequence by its length. TRL warns about each of these.
    """
    level = config.importance_sampling_level
    wanted = {"luspo": "sequence", "vespo": "token"}.get(config.loss_type)
    if wanted and level != wanted:
        yield Finding(
            f"loss_type {config.loss_type} expects importance_sampling_level '{wanted}' (got '{level}')",
            ("importance_sampling_level", "loss_type"),
            hint=f"set importance_sampling_level: {wanted}",
            fix=Fix(set={"importance_sampling_level": wanted}, safe=False, title=f"use {wanted}"),
        )
    elif level == "sequence" and config.loss_type in ("bnpo", "dr_grpo", "dapo", "cispo"):
        luspo = " or luspo" if ctx.accepts("loss_type", "luspo") else ""  # only where the release has it
        yield Finding(
            f"loss_type {config.loss_type} with sequence-level ratios weighs each sequence by its length",
            ("importance_sampling_level", "loss_type"),
            hint=f"use loss_type grpo (GSPO){luspo} with sequence-level ratios",
        )


@rule("GRPO-L003", "error", ("loss_type", "max_completion_length"))
def dr_grpo_needs_completion_length(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """dr_grpo needs max_completion_length.

    dr_grpo divides the token sum by batch size x max_completion_length; with no length TRL crashes at the first
    step.
    """
    if config.loss_type == "dr_grpo" and config.max_completion_length is None:
        yield Finding(
            "loss_type dr_grpo needs a max_completion_length (got null)",
            ("max_completion_length", "loss_type"),
            hint="set max_completion_length, e.g. 1024",
        )


@rule("GRPO-L004", "warning", ("loss_type", "epsilon_high"))
def cispo_cap_is_absolute(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """cispo uses epsilon_high as an absolute cap on the ratio.

    Unset, the cap falls back to epsilon (0.2), which clips every token's weight to 0.2; CISPO (ScaleRL) uses
    epsilon_high around 5.
    """
    cap = config.epsilon_high if config.epsilon_high is not None else config.epsilon
    if config.loss_type == "cispo" and cap < 1:
        yield Finding(
            f"cispo caps the importance weight at {cap:g}, below 1: every token's weight is clipped",
            ("epsilon_high", "loss_type"),
            hint="set epsilon_high: 5.0",
            fix=Fix(set={"epsilon_high": 5.0}, safe=False, title="use epsilon_high 5.0"),
        )


@rule("GRPO-L005", "warning", ("delta", "epsilon", "epsilon_high", "loss_type"))
def delta_above_clip_range(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """delta should exceed 1 + epsilon_high.

    Two-sided clipping caps the ratio at delta; at or below the upper clip bound it cuts into the normal clipping
    range (INTELLECT-2 recommends delta > 1 + epsilon).
    """
    upper = 1 + (config.epsilon_high if config.epsilon_high is not None else config.epsilon)
    if config.delta is not None and config.loss_type in _CLIPPED and config.delta <= upper:
        yield Finding(
            f"delta ({config.delta:g}) is not above the upper clip bound 1 + epsilon_high ({upper:g})",
            ("delta",),
            hint=f"set delta above {upper:g}, e.g. {max(4.0, upper + 1):g}",
        )


@rule("GRPO-L006", "error", ("use_adaptive_entropy", "entropy_coef_min", "entropy_coef_max"))
def entropy_bounds_ordered(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """entropy_coef_min must not exceed entropy_coef_max.

    The adaptive entropy coefficient is clamped into [entropy_coef_min, entropy_coef_max] every step; reversed
    bounds pin it to a meaningless value (TRL does not check this).
    """
    if config.use_adaptive_entropy and config.entropy_coef_min > config.entropy_coef_max:
        yield Finding(
            f"entropy_coef_min ({config.entropy_coef_min:g}) is above entropy_coef_max ({config.entropy_coef_max:g})",
            ("entropy_coef_min", "entropy_coef_max"),
            hint="swap the two bounds",
        )


@rule("GRPO-L007", "error", ("sync_ref_model", "beta"))
def sync_ref_model_needs_kl(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """sync_ref_model needs beta > 0.

    With beta 0 no reference model is loaded, so there is nothing to sync; TRL refuses the combination.
    """
    if config.sync_ref_model and config.beta == 0:
        yield Finding(
            "sync_ref_model is true but beta is 0, so there is no reference model to sync",
            ("sync_ref_model", "beta"),
            hint="set beta > 0 (e.g. 0.04) or sync_ref_model: false",
        )


@rule("GRPO-L008", "error", ("sync_ref_model", "use_peft", "beta"))
def sync_ref_model_without_peft(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """sync_ref_model does not work with PEFT adapters.

    With LoRA the reference is the base model with adapters disabled; TRL cannot sync it.
    """
    if config.sync_ref_model and config.use_peft and config.beta != 0:
        yield Finding(
            "sync_ref_model is not supported with use_peft",
            ("sync_ref_model", "use_peft"),
            hint="set sync_ref_model: false",
        )


@rule("GRPO-L009", "warning", ("beta", "ref_model_mixup_alpha", "ref_model_sync_steps"))
def kl_settings_without_kl(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """KL settings are set while beta is 0.

    With beta 0 the KL term and the reference model are skipped, so reference-model settings have no effect.
    """
    unused = [n for n in ("ref_model_mixup_alpha", "ref_model_sync_steps") if n in ctx.explicit]
    if config.beta == 0 and unused:
        yield Finding(
            f"{', '.join(unused)} {has_or_have(unused)} no effect with beta 0 (no reference model)",
            tuple(unused),
            hint="set beta > 0 to use a reference model, or remove these keys",
        )

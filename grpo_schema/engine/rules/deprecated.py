"""Deprecated keys that TRL 1.16 still reads, with what to write instead."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.rules import Finding, RuleContext, rule


@rule("GRPO-D001", "warning", ("vllm_importance_sampling_cap", "vllm_importance_sampling_clip_max"))
def is_cap_deprecated(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """vllm_importance_sampling_cap is deprecated (TRL 1.6): use vllm_importance_sampling_clip_max.

    While it is still read, it overrides vllm_importance_sampling_clip_max.
    """
    cap = config.vllm_importance_sampling_cap
    if cap is not None and "vllm_importance_sampling_cap" in ctx.explicit:
        overrides = (
            " and overrides vllm_importance_sampling_clip_max"
            if "vllm_importance_sampling_clip_max" in ctx.explicit
            else ""
        )
        yield Finding(
            f"vllm_importance_sampling_cap is deprecated{overrides}; use vllm_importance_sampling_clip_max",
            ("vllm_importance_sampling_cap",),
            hint=f"write vllm_importance_sampling_clip_max: {cap:g}",
            fix=Fix(
                set={"vllm_importance_sampling_clip_max": cap},
                unset=("vllm_importance_sampling_cap",),
                title="move to vllm_importance_sampling_clip_max",
            ),
        )


@rule("GRPO-D002", "warning", ("use_transformers_paged",))
def paged_generation_deprecated(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """use_transformers_paged is deprecated: use use_transformers_continuous_batching."""
    if config.use_transformers_paged:
        yield Finding(
            "use_transformers_paged is deprecated; use use_transformers_continuous_batching",
            ("use_transformers_paged",),
            hint="write use_transformers_continuous_batching: true",
            fix=Fix(
                rename={"use_transformers_paged": "use_transformers_continuous_batching"},
                title="rename to use_transformers_continuous_batching",
            ),
        )


@rule("GRPO-D003", "warning", ("use_liger_kernel",))
def liger_kernel_deprecated(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """use_liger_kernel is deprecated for GRPO in TRL 1.16.

    It only patches layers with Liger kernels; TRL suggests model_init_kwargs {use_kernels: true} instead.
    """
    if config.use_liger_kernel:
        yield Finding(
            "use_liger_kernel is deprecated for GRPO",
            ("use_liger_kernel",),
            hint="use model_init_kwargs: {use_kernels: true}",
        )


@rule("GRPO-D004", "warning", ("gradient_checkpointing", "activation_checkpointing"))
def gradient_checkpointing_renamed(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """gradient_checkpointing is deprecated in transformers 5: use activation_checkpointing.

    transformers still copies the old name into the new one (with a FutureWarning) when the new one is unset.
    """
    for old, new in (
        ("gradient_checkpointing", "activation_checkpointing"),
        ("gradient_checkpointing_kwargs", "activation_checkpointing_kwargs"),
    ):
        if old in ctx.explicit and new not in ctx.explicit:
            yield Finding(
                f"{old} is deprecated; use {new}",
                (old,),
                hint=f"rename {old} to {new}",
                fix=Fix(rename={old: new}, title=f"rename to {new}"),
            )


@rule("GRPO-D005", "warning", ("local_rank",))
def local_rank_not_in_config(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """local_rank is set by the launcher and deprecated in a config."""
    if "local_rank" in ctx.explicit:
        yield Finding(
            "local_rank is set by the launcher; remove it from the config",
            ("local_rank",),
            fix=Fix(unset=("local_rank",), title="remove local_rank"),
        )

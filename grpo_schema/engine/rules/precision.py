"""Precision: mutually exclusive mixed-precision settings."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.rules import Finding, RuleContext, rule


@rule("GRPO-P001", "error", ("fp16", "bf16"))
def fp16_and_bf16_exclusive(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """fp16 and bf16 cannot both be true.

    transformers refuses two mixed-precision modes at once. (Setting only fp16 is enough: TRL's bf16 default then
    becomes false.)
    """
    if config.fp16 and config.bf16:
        yield Finding(
            "fp16 and bf16 cannot both be true",
            ("bf16", "fp16"),
            hint="keep one: bf16 on Ampere or newer GPUs, fp16 on older ones",
            fix=Fix(set={"fp16": False}, safe=False, title="keep bf16"),
        )


@rule("GRPO-P002", "error", ("fp16_full_eval", "bf16_full_eval"))
def full_eval_precisions_exclusive(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """fp16_full_eval and bf16_full_eval cannot both be true."""
    if config.fp16_full_eval and config.bf16_full_eval:
        yield Finding(
            "fp16_full_eval and bf16_full_eval cannot both be true",
            ("bf16_full_eval", "fp16_full_eval"),
            hint="keep one of them",
        )


@rule("GRPO-P003", "warning", ("bf16", "fp16", "use_cpu"))
def cpu_with_half_precision(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """fp16 on the CPU is not supported.

    With use_cpu, float16 mixed precision has no CPU kernels for many operations; use bf16 or full precision.
    """
    if config.use_cpu and config.fp16:
        yield Finding(
            "fp16 with use_cpu: float16 mixed precision is not supported on the CPU",
            ("fp16", "use_cpu"),
            hint="set fp16: false (and bf16: false for full precision)",
        )

"""Mixed precision from the config, without importing torch (`grpo launch` needs it before any process starts)."""

from __future__ import annotations


def mixed_precision(config) -> str:
    """bf16 unset means "on unless fp16", as in TRL's configs."""
    bf16 = config.bf16 if config.bf16 is not None else not config.fp16
    return "fp16" if config.fp16 else "bf16" if bf16 else "no"

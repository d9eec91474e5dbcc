"""Kept at this path for `from grpo_schema.compiled import write_cache`: the module is grpo_schema.engine.compiled."""

from grpo_schema.engine.compiled import (
    CACHE_PATH,
    MODELS,
    CompiledModel,
    cache_text,
    compile_model,
    compiled,
    from_model,
    source_fingerprint,
    write_cache,
)

__all__ = [
    "CACHE_PATH",
    "MODELS",
    "CompiledModel",
    "cache_text",
    "compile_model",
    "compiled",
    "from_model",
    "source_fingerprint",
    "write_cache",
]

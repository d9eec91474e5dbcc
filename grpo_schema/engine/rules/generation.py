"""Generation: settings that contradict each other or are overridden."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.engine.rules import Finding, RuleContext, rule

# generation_kwargs keys that shadow a dedicated field (the dedicated field is then ignored).
_SHADOWED = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "min_p": "min_p",
    "repetition_penalty": "repetition_penalty",
    "max_new_tokens": "max_completion_length",
    "max_tokens": "max_completion_length",
    "cache_implementation": "cache_implementation",
}


@rule("GRPO-G001", "warning", ("generation_kwargs",))
def generation_kwargs_shadow_fields(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A generation_kwargs key overrides a dedicated field.

    Keys in generation_kwargs are applied after the dedicated fields (temperature, top_p, ...), so the dedicated
    field silently loses. Keep each setting in one place.
    """
    if not config.generation_kwargs:  # most configs: nothing to look through
        return
    for key, field_name in _SHADOWED.items():
        if key in config.generation_kwargs:
            yield Finding(
                f"generation_kwargs.{key} ({config.generation_kwargs[key]!r}) overrides {field_name} "
                f"({getattr(config, field_name)!r})",
                ("generation_kwargs", field_name),
                hint=f"set {field_name} and drop {key} from generation_kwargs",
            )


@rule("GRPO-G002", "warning", ("use_vllm", "use_transformers_continuous_batching", "use_transformers_paged"))
def one_generation_backend(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """vLLM and transformers continuous batching are both switched on.

    Only one generation backend runs; with use_vllm the continuous-batching setting has no effect.
    """
    if config.use_vllm and (config.use_transformers_continuous_batching or config.use_transformers_paged):
        yield Finding(
            "use_vllm and use_transformers_continuous_batching are both true; vLLM is used",
            ("use_transformers_continuous_batching", "use_vllm"),
            hint="switch one of them off",
        )


@rule("GRPO-G003", "warning", ("use_vllm", "cache_implementation"))
def cache_implementation_needs_transformers_generation(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """cache_implementation only applies to transformers generation.

    With use_vllm, vLLM manages its own KV cache and cache_implementation is ignored.
    """
    if config.use_vllm and config.cache_implementation is not None:
        yield Finding(
            "cache_implementation has no effect with use_vllm",
            ("cache_implementation", "use_vllm"),
            hint="remove cache_implementation",
        )

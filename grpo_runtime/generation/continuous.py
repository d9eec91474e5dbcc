"""Generation with transformers' continuous batching (`use_transformers_continuous_batching`, or its deprecated
name `use_transformers_paged`), as TRL 1.16 does it: the policy's own `generate_batch`, with a paged KV cache sized
by `transformers_continuous_batching_config` (ContinuousBatchingConfig's fields).

Requests are scheduled one token at a time instead of padding the batch to its longest row, which pays off on a GPU
with long, uneven completions. Sampling reads the same GenerationConfig as plain `generate`, so the settings are
the transformers path's; like TRL, no sampler log-probs come back (the importance-sampling correction is vLLM's).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json

from grpo_runtime.generation.backend import GenerationError, Samples

# TRL leaves half the accelerator's memory to training unless the config says otherwise (transformers' own
# default, 0.9, leaves almost nothing for the backward pass).
TRAINING_MEMORY_SHARE = 0.5


def continuous_batching_settings(config) -> dict:
    """transformers_continuous_batching_config as keyword arguments (a dict, or a JSON object in a string)."""
    value = config.transformers_continuous_batching_config or {}
    if isinstance(value, str):
        value = json.loads(value)
    settings = dict(value)
    settings.setdefault("max_memory_percent", TRAINING_MEMORY_SHARE)
    return settings


def continuous_batching_wanted(config) -> bool:
    return bool(config.use_transformers_continuous_batching or config.use_transformers_paged)


class ContinuousBatchingBackend:
    """`generate_batch` on the policy; completions come back in the order of the prompt rows."""

    name = "transformers-continuous-batching"

    def __init__(self, parts, config):
        from transformers.generation import ContinuousBatchingConfig

        self.parts = parts
        self.checkpointing = config
        self.batching = ContinuousBatchingConfig(**continuous_batching_settings(config))

    def generate(self, prompt_lists, num_generations, step) -> Samples:
        from grpo_runtime.generation.rollout import generation_mode
        from grpo_runtime.model.loading import checkpointing_settings

        parts = self.parts
        with (
            generation_mode(parts.policy, checkpointing_settings(self.checkpointing)[1]),
            without_autocast(parts.policy),
        ):
            outputs = parts.policy.generate_batch(
                [list(p) for p in prompt_lists],
                generation_config=parts.generation_config,
                continuous_batching_config=self.batching,
                progress_bar=False,
            )
        results = list(outputs.values())
        failed = [result.error for result in results if getattr(result, "error", None)]
        if len(results) != len(prompt_lists) or failed:
            raise GenerationError(
                f"continuous batching returned {len(results)} of {len(prompt_lists)} completions"
                + (f"; the first failure: {failed[0]}" if failed else "")
                + "; lower max_memory_percent or set use_transformers_continuous_batching: false"
            )
        return Samples([cut_after_first_eos(list(r.generated_tokens), parts.eos_ids) for r in results], None)

    def close(self) -> None:
        pass


@contextlib.contextmanager
def without_autocast(model):
    """The model's own forward, not the autocast wrapper accelerate puts on it for bf16/fp16: the paged cache takes
    the model's dtype, and half-precision keys and values from autocast do not fit a float32-loaded model's cache.
    A bf16-loaded model (the usual recipe) generates in bf16 either way. (TRL casts a float32 policy to bf16 in
    place here, which would also turn the rest of its training to bf16: not copied.)"""
    wrapped = model.__dict__.get("forward")
    original = model.__dict__.get("_original_forward")
    if wrapped is None or original is None:
        yield model
        return
    model.forward = original
    try:
        yield model
    finally:
        model.forward = wrapped


def cut_after_first_eos(tokens: list[int], eos_ids: list[int]) -> list[int]:
    """The completion up to and including its first EOS (the scheduler may stop on any of the EOS ids)."""
    stops = set(eos_ids)
    for index, token in enumerate(tokens):
        if token in stops:
            return tokens[: index + 1]
    return tokens


def unknown_batching_settings(config) -> list[str]:
    """transformers_continuous_batching_config keys ContinuousBatchingConfig does not take (checked only where
    transformers is installed: the table is read without torch too)."""
    if not continuous_batching_wanted(config) or config.use_vllm or importlib.util.find_spec("transformers") is None:
        return []
    import dataclasses

    from transformers.generation import ContinuousBatchingConfig

    value = config.transformers_continuous_batching_config or {}
    try:
        value = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return ["transformers_continuous_batching_config is a string but not a JSON object"]
    known = (
        {f.name for f in dataclasses.fields(ContinuousBatchingConfig)}
        if dataclasses.is_dataclass(ContinuousBatchingConfig)
        else None
    )
    unknown = sorted(set(value) - known) if known is not None and isinstance(value, dict) else []
    return (
        [
            f"transformers_continuous_batching_config has keys ContinuousBatchingConfig does not take: "
            f"{', '.join(unknown)}"
        ]
        if unknown
        else []
    )

"""Prefill each distinct prompt once and share its KV cache with the rows that repeat it.

A generation batch holds every prompt `num_generations` times. Its prompt tokens give the same keys and values on
every copy, so the lean decoding loop (decode.py, `prefill_prompts`) runs them once per distinct prompt and
expands the cache to all rows: the cache `generate` would build itself, up to floating-point rounding (~1e-7),
from the same inputs in a batch of distinct prompts instead of all rows.

Sharing is exact only when the forward pass is deterministic, so it is off whenever dropout is active (the model
stays in train mode while generating, as in TRL) and for caches other than transformers' plain DynamicCache.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Sharing:
    """Which rows repeat which prompt."""

    leaders: torch.Tensor  # [U] the first row of each distinct prompt
    owners: torch.Tensor  # [R] for every row, the index (into leaders) of its prompt

    @classmethod
    def of(cls, prompt_lists: list[list[int]]) -> "Sharing":
        first: dict[tuple[int, ...], int] = {}
        leaders, owners = [], []
        for row, ids in enumerate(prompt_lists):
            key = tuple(ids)
            if key not in first:
                first[key] = len(leaders)
                leaders.append(row)
            owners.append(first[key])
        return cls(torch.tensor(leaders, dtype=torch.long), torch.tensor(owners, dtype=torch.long))

    @property
    def saves_work(self) -> bool:
        return len(self.leaders) < len(self.owners)


def stochastic_forward(model) -> bool:
    """Whether a forward pass draws random numbers in train mode: NEFTune noise, dropout modules with p > 0 or a
    config dropout rate (attention dropout is applied functionally from the config)."""
    if not model.training:
        return False
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    if getattr(embeddings, "neftune_noise_alpha", None) is not None:
        return True  # NEFTune noise on the embeddings
    if any(isinstance(m, torch.nn.Dropout) and m.p > 0 and m.training for m in model.modules()):
        return True
    settings = vars(model.config.get_text_config(decoder=True))
    return any(isinstance(v, float) and v > 0 and ("dropout" in k or "pdrop" in k) for k, v in settings.items())


def resolved_config(model, gen_config):
    """The GenerationConfig as `generate` resolves it (the model's generation config fills what ours leaves unset),
    and the model inputs it would add."""
    return model._prepare_generation_config(gen_config)


def one_sequence_per_row(resolved) -> bool:
    """Sampling or greedy decoding of one sequence per input row (beam search and num_return_sequences expand the
    rows inside generate)."""
    from transformers.generation import GenerationMode

    return (
        resolved.get_generation_mode() in (GenerationMode.SAMPLE, GenerationMode.GREEDY_SEARCH)
        and (resolved.num_return_sequences or 1) == 1
    )


def can_share_cache(model, resolved) -> bool:
    """For a transformers causal LM (PreTrainedModel, not a PEFT wrapper) and the config as generate resolves it:
    one sequence per row, with a DynamicCache, deterministically."""
    return (
        model._supports_default_dynamic_cache()
        and resolved.cache_implementation in (None, "dynamic")
        and resolved.use_cache is not False
        and one_sequence_per_row(resolved)
        and not stochastic_forward(model)
    )


def full_attention_only(cache) -> bool:
    """Every layer a plain DynamicLayer: rows can be copied from their prompt's row (a sliding-window layer
    keeps only part of a long prompt and is left alone)."""
    from transformers.cache_utils import DynamicLayer

    return all(type(layer) is DynamicLayer for layer in cache.layers)

"""Prefill each distinct prompt once and share its KV cache with the rows that repeat it.

A generation batch holds every prompt `num_generations` times. Its prompt tokens give the same keys and values on
every copy, so they are computed once per distinct prompt and the cache is expanded to all rows. The result is
the cache `generate` would build itself, up to floating-point rounding (~1e-7): the same inputs, left padding,
position ids (`cumsum(mask) - 1`, 0 on pads) and attention mask, in a batch of distinct prompts instead of all
rows.

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
    """Whether a forward pass draws random numbers: dropout modules with p > 0 or a config dropout rate (attention
    dropout is applied functionally from the config), in train mode."""
    if not model.training:
        return False
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

    return (resolved.get_generation_mode() in (GenerationMode.SAMPLE, GenerationMode.GREEDY_SEARCH)
            and (resolved.num_return_sequences or 1) == 1)


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


def positions(attention_mask: torch.Tensor) -> torch.Tensor:
    """Position ids as `generate` derives them from a left-padded mask: 0, 1, ... from the first real token."""
    return (attention_mask.long().cumsum(-1) - 1).masked_fill(attention_mask == 0, 0)


def prefill(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, logits_to_keep: int = 1):
    """One forward pass over `input_ids` [U, L] into a new DynamicCache, with the inputs `generate` gives its first
    forward (an all-ones mask is dropped, as generate drops it). Returns (output, cache)."""
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config.get_text_config(decoder=True))
    mask = None if bool((attention_mask == 1).all()) else attention_mask
    output = model(input_ids=input_ids, attention_mask=mask, position_ids=positions(attention_mask),
                   past_key_values=cache, use_cache=True, logits_to_keep=logits_to_keep, return_dict=True)
    return output, output.past_key_values


def full_attention_only(cache) -> bool:
    """Every layer a plain DynamicLayer: rows can be copied from their prompt's row (a sliding-window layer
    keeps only part of a long prompt and is left alone)."""
    from transformers.cache_utils import DynamicLayer

    return all(type(layer) is DynamicLayer for layer in cache.layers)


def expand_cache(cache, owners: torch.Tensor):
    """Give every row its prompt's cached keys and values (None when the cache has other layers)."""
    if not full_attention_only(cache):
        return None
    cache.batch_select_indices(owners.to(cache.layers[0].keys.device))
    return cache


def shared_prompt_cache(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, sharing: Sharing):
    """The cache of every row's prompt but its last token, computed once per distinct prompt ([R, P-1] entries;
    `generate` then runs only the last prompt token). None when the cache cannot be shared."""
    if input_ids.size(1) < 2:
        return None
    leaders = sharing.leaders.to(input_ids.device)
    _, cache = prefill(model, input_ids[leaders, :-1], attention_mask[leaders, :-1])
    return expand_cache(cache, sharing.owners)

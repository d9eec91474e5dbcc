"""Generation: prompts to completions with transformers `generate`, cropped and masked like TRL 1.16.

What users can rely on:
* conversational prompts (lists of {"role", "content"} messages) go through the tokenizer's chat template with
  `add_generation_prompt=True`; plain-text prompts are tokenized as they are (a BOS is added by tokenizers that
  add one). Prompts are never truncated;
* sampling uses temperature, top_p, top_k, min_p, repetition_penalty and `max_completion_length`, and anything in
  `generation_kwargs` overrides those;
* a completion ends at the first end-of-sequence token (the tokenizer's EOS or any EOS in the model's generation
  config); the EOS is kept, everything after it is dropped;
* a completion that hit `max_completion_length` without an EOS is "truncated"; with `mask_truncated_completions`
  it is removed from the loss but still counts in the reward statistics of its group.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch


def is_conversational(prompt) -> bool:
    return isinstance(prompt, list) and bool(prompt) and isinstance(prompt[0], dict) and "role" in prompt[0]


def tokenize_prompts(tokenizer, prompts: list, chat_template_kwargs: dict | None) -> list[list[int]]:
    """Token ids of each prompt, unpadded. Rows repeat each prompt num_generations times, so each distinct prompt
    is rendered and tokenized once (the chat template is the costly part) and its ids are shared by its rows."""
    keys = [repr(prompt) for prompt in prompts]
    distinct = list({key: prompt for key, prompt in zip(keys, prompts)}.items())
    unique = [prompt for _, prompt in distinct]
    if is_conversational(prompts[0]):
        encoded = tokenizer.apply_chat_template(
            conversation=unique,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            **(chat_template_kwargs or {}),
        )["input_ids"]
    else:
        encoded = tokenizer(text=unique)["input_ids"]
    ids = {key: list(row) for (key, _), row in zip(distinct, encoded)}
    return [list(ids[key]) for key in keys]


def eos_token_ids(tokenizer, model) -> list[int]:
    """The tokenizer's EOS first, then every EOS the model's generation config declares (e.g. end-of-turn)."""
    declared = model.generation_config.eos_token_id
    ids = [] if declared is None else [declared] if isinstance(declared, int) else list(declared)
    return ids if tokenizer.eos_token_id in ids else [tokenizer.eos_token_id, *ids]


def generation_config(config, tokenizer, eos_ids: list[int]):
    """The sampling settings of the validated config; `generation_kwargs` win over the named fields."""
    from transformers import GenerationConfig

    settings = dict(
        max_new_tokens=config.max_completion_length,
        do_sample=True,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=eos_ids,
        temperature=config.temperature,
        top_p=config.top_p,
        top_k=config.top_k,
        min_p=config.min_p,
        repetition_penalty=config.repetition_penalty,
        cache_implementation=config.cache_implementation,
    )
    settings.update(config.generation_kwargs or {})
    return GenerationConfig(**settings, disable_compile=True)


def pad_multiple(value) -> int | None:
    """`pad_to_multiple_of`: "auto" means no extra padding off Neuron devices, like TRL."""
    return None if value in (None, "auto") else int(value)


def pad_rows(rows: list[list[int]], value: int, side: str, multiple: int | None = None) -> torch.Tensor:
    """Stack ragged rows into [R, W], padding on the left or right to the longest row (or a multiple)."""
    width = max((len(r) for r in rows), default=0)
    if multiple:
        width = -(-width // multiple) * multiple
    out = torch.full((len(rows), width), value, dtype=torch.long)
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long).unsqueeze(1)  # [R, 1]
    columns = torch.arange(width).unsqueeze(0)  # [1, W]
    filled = columns >= width - lengths if side == "left" else columns < lengths  # [R, W]
    # One tensor from all the ids, written in row-major order: the filled cells, row by row (no per-row copies).
    out[filled] = torch.tensor([token for row in rows for token in row], dtype=torch.long)
    return out


def crop_after_first_eos(completion_ids: torch.Tensor, eos_ids: list[int]) -> list[list[int]]:
    """Keep each row up to and including its first EOS; rows without one are kept whole.  [R, C] -> R lists"""
    is_eos = torch.isin(completion_ids, torch.tensor(eos_ids, device=completion_ids.device))  # [R, C]
    first = is_eos.int().argmax(dim=1)  # [R] index of the first EOS (0 when there is none)
    kept = torch.where(is_eos.any(dim=1), first + 1, is_eos.size(1))  # [R]
    # one conversion to lists, then slices (indexing each row's tensor costs more than the rest together)
    return [row[:n] for row, n in zip(completion_ids.tolist(), kept.tolist())]


@contextlib.contextmanager
def generation_mode(model, checkpointing_kwargs: dict | None):
    """Switch activation checkpointing off while sampling or scoring without gradients (it would disable the KV
    cache), then restore it. The model stays in train mode, as in TRL, so any dropout stays active."""
    from grpo_runtime.model.loading import disable_checkpointing, enable_checkpointing, is_checkpointing

    was_checkpointing = is_checkpointing(model)
    if was_checkpointing:
        disable_checkpointing(model)
    try:
        with torch.no_grad():
            yield model
    finally:
        if was_checkpointing:
            enable_checkpointing(model, checkpointing_kwargs)


def sample_completions(model, prompt_lists, gen_config, pad_id: int, eos_ids, pad_multiple=None) -> list[list[int]]:
    """One sampled completion per prompt row (rows are already repeated num_generations times).

    Always through `generate` and its GenerationConfig. Each distinct prompt is prefilled once when that is exact
    (prefill.py), and the standard sampling settings run in a lean loop that makes the same calls and draws
    (decode.py), which is also where prompts are shared; anything else runs generate's own loop unchanged."""
    from grpo_runtime.generation.decode import LeanSampler, Route, synchronised_decoding
    from grpo_runtime.generation.prefill import Sharing

    input_ids = pad_rows(prompt_lists, pad_id, "left", pad_multiple).to(model.device)  # [R, P]
    attention_mask = pad_rows([[1] * len(p) for p in prompt_lists], 0, "left", pad_multiple).to(model.device)
    route, sharing = Route.choose(model, gen_config), Sharing.of(prompt_lists)
    shared = sharing if route.share and sharing.saves_work else None
    inputs = dict(input_ids=input_ids, attention_mask=attention_mask, generation_config=gen_config)
    # inference_mode is ~11% faster than no_grad alone (the ids go back to lists, nothing reuses them); sharded
    # models (FSDP2, ZeRO-3) keep their gathered-weight buffers for training, which must not be inference tensors
    with torch.no_grad() if synchronised_decoding(model) else torch.inference_mode():
        if route.lean:
            output = model.generate(**inputs, custom_generate=LeanSampler(shared))
        else:
            output = model.generate(**inputs)
    return crop_after_first_eos(output[:, input_ids.size(1) :], eos_ids)  # [R, C] -> R lists


@dataclass
class Rollout:
    """One process's share of a generation batch, as tensors ready for the loss."""

    prompt_ids: torch.Tensor  # [R, P] left-padded
    prompt_mask: torch.Tensor  # [R, P]
    completion_ids: torch.Tensor  # [R, C] right-padded, C = longest local completion
    completion_mask: torch.Tensor  # [R, C] 1 on kept tokens (EOS included); 0 on truncated rows if masked
    truncated: torch.Tensor  # [R] bool: no EOS before max_completion_length
    completion_lengths: torch.Tensor  # [R] tokens kept, before any masking of truncated rows
    prompt_lengths: torch.Tensor  # [R]


def build_rollout(prompt_lists, completion_lists, pad_id: int, eos_ids, mask_truncated: bool, pad_multiple=None):
    stop_ids = set(eos_ids) | {pad_id}
    truncated = torch.tensor([not ids or ids[-1] not in stop_ids for ids in completion_lists])  # [R]
    completion_mask = pad_rows([[1] * len(c) for c in completion_lists], 0, "right", pad_multiple)  # [R, C]
    if mask_truncated:
        completion_mask = completion_mask * (~truncated).unsqueeze(1).long()
    return Rollout(
        prompt_ids=pad_rows(prompt_lists, pad_id, "left", pad_multiple),
        prompt_mask=pad_rows([[1] * len(p) for p in prompt_lists], 0, "left", pad_multiple),
        completion_ids=pad_rows(completion_lists, pad_id, "right", pad_multiple),
        completion_mask=completion_mask,
        truncated=truncated,
        completion_lengths=torch.tensor([len(c) for c in completion_lists]),
        prompt_lengths=torch.tensor([len(p) for p in prompt_lists]),
    )


def decode_completions(tokenizer, completion_lists, conversational: bool) -> list:
    """Text for reward functions: assistant messages for conversational prompts, plain strings otherwise."""
    texts = tokenizer.batch_decode(completion_lists, skip_special_tokens=True)
    return [[{"role": "assistant", "content": t}] for t in texts] if conversational else texts

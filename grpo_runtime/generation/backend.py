"""Generation backends: token ids of prompts in, sampled completions out, behind one small interface.

    backend = build_backend(config, plan, parts)      # generation.backends: transformers (plain or continuous
                                                      # batching), vLLM colocate or a vLLM server
    samples = backend.generate(prompt_lists, num_generations, step)
    backend.close()

`prompt_lists` holds one row per completion (each distinct prompt repeated `num_generations` times, consecutively,
as the sampler lays them out). `step` is the optimizer step whose weights the completions must come from: a vLLM
backend loads the policy's current weights into its engine whenever `step` differs from the step it last loaded,
so a generation after step N always samples from step N's weights (and never reloads during gradient
accumulation). The transformers backend samples from the policy itself, so it has nothing to load.

Every backend samples with the same settings: temperature, top_p, top_k, min_p, repetition_penalty,
`max_completion_length`, the EOS set (tokenizer EOS plus the model's generation-config EOS) and
`generation_kwargs` on top (for vLLM these are SamplingParams fields, as in TRL).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass
class Samples:
    completions: list[list[int]]  # one per prompt row, cut after the first EOS (EOS kept)
    logprobs: list[list[float]] | None  # the sampler's log-prob of each completion token (NaN: unknown); vLLM only


class Backend(Protocol):
    name: str  # backend_name(config): what run_info.json reports

    def generate(self, prompt_lists: list[list[int]], num_generations: int, step: int) -> Samples: ...

    def close(self) -> None: ...


class GenerationError(RuntimeError):
    """Generation cannot go on (e.g. the vLLM server is unreachable or died); the message says what to do."""


def vllm_sampling_settings(config, eos_ids: list[int], num_generations: int) -> dict:
    """SamplingParams fields equal to the transformers path's GenerationConfig. `logprobs=0` returns the sampled
    token's log-prob (after temperature and the other processors: the engines run with processed log-probs), which
    the importance-sampling correction compares with the trainer's. `generation_kwargs` win, as in TRL."""
    settings = dict(
        n=num_generations,
        temperature=config.temperature,
        top_p=config.top_p,
        top_k=config.top_k or 0,
        min_p=config.min_p or 0.0,
        repetition_penalty=config.repetition_penalty,
        max_tokens=config.max_completion_length,
        logprobs=0,
        stop_token_ids=list(eos_ids),
    )
    if config.vllm_structured_outputs_regex is not None:
        settings["structured_outputs"] = {"regex": config.vllm_structured_outputs_regex}
    settings.update(config.generation_kwargs or {})
    return settings


def sampled_logprobs(rows) -> list[list[float]]:
    """The first (sampled-token) entry of each position's log-probs; None (vLLM's NaN) becomes NaN."""
    return [[float("nan") if lp is None else float(lp) for lp in row] for row in rows]

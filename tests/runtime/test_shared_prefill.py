"""Prefilling each distinct prompt once (grpo_runtime.generation.prefill, in the lean loop) gives what plain `generate` gives:
the same greedy tokens here; the same sampled tokens for the same seed in test_lean_decoding; and it is off wherever
it would not be exact."""

import copy

import pytest
import torch

from grpo_runtime.generation.decode import Route
from grpo_runtime.generation.prefill import Sharing, stochastic_forward
from grpo_runtime.generation.rollout import crop_after_first_eos, eos_token_ids, generation_config, sample_completions
from tests.support.tiny import build_model

from .helpers import generation_settings as settings
from .helpers import prompt_batch


def shares(model, gen_config) -> bool:
    return Route.choose(model, gen_config).share


def generate(model, input_ids, attention_mask, gen_config):
    """Plain `generate`, returning the sequences and each step's raw logits."""
    gen_config = copy.deepcopy(gen_config)
    gen_config.return_dict_in_generate, gen_config.output_logits = True, True
    with torch.inference_mode():
        return model.generate(input_ids=input_ids, attention_mask=attention_mask, generation_config=gen_config)


def test_sharing_maps_rows_to_distinct_prompts():
    sharing = Sharing.of([[1, 2], [3], [1, 2], [3], [4]])
    assert sharing.leaders.tolist() == [0, 1, 4] and sharing.owners.tolist() == [0, 1, 0, 1, 2]
    assert sharing.saves_work and not Sharing.of([[1], [2]]).saves_work


@pytest.mark.parametrize("extra, lean", [({}, True), ({"prefill_chunk_size": 4}, False)])
def test_greedy_completions_equal_plain_generate(tiny_policy, extra, lean):
    """Through sample_completions: in the lean loop with shared prefill, or in generate's own loop (no sharing)."""
    model, tokenizer = tiny_policy
    eos_ids = eos_token_ids(tokenizer, model)
    gen_config = generation_config(settings(top_k=1, generation_kwargs=extra), tokenizer, eos_ids)
    prompt_lists, batch = prompt_batch(tokenizer)
    input_ids, attention_mask = batch["input_ids"], batch["attention_mask"]
    assert Route.choose(model, gen_config) == Route(lean=lean, share=lean) and Sharing.of(prompt_lists).saves_work
    with torch.no_grad():
        shared = sample_completions(model, prompt_lists, gen_config, tokenizer.pad_token_id, eos_ids)
    plain = generate(model, input_ids, attention_mask, gen_config).sequences[:, input_ids.size(1) :]
    assert shared == crop_after_first_eos(plain, eos_ids)


def test_sharing_is_off_where_it_would_not_be_exact(tiny_policy):
    """Dropout in train mode, another cache, or generate expanding the rows itself (beams, several sequences)."""
    model, tokenizer = tiny_policy
    gen_config = generation_config(settings(), tokenizer, eos_token_ids(tokenizer, model))
    noisy = build_model(tokenizer)
    noisy.config.attention_dropout = 0.1  # applied functionally in train mode
    assert stochastic_forward(noisy.train()) and not shares(noisy, gen_config)
    assert not stochastic_forward(noisy.eval()) and shares(noisy, gen_config)
    from grpo_runtime.model.loading import add_neftune_noise

    neftune = build_model(tokenizer)
    add_neftune_noise(neftune, 5.0)  # noise on the embeddings of every train-mode forward
    assert stochastic_forward(neftune.train()) and not shares(neftune, gen_config)
    assert not stochastic_forward(neftune.eval())
    with_module = torch.nn.Sequential(torch.nn.Dropout(0.1))
    with_module.config = model.config
    assert stochastic_forward(with_module.train())
    assert not shares(model, generation_config(settings(cache_implementation="static"), tokenizer, [3]))
    for expands in ({"num_beams": 2, "do_sample": False}, {"num_return_sequences": 2}):
        assert not shares(model, generation_config(settings(generation_kwargs=expands), tokenizer, [3]))

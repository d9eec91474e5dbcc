"""Prefilling each distinct prompt once (grpo_runtime.prefill) gives what plain `generate` gives: the same greedy
tokens, the same sampled tokens for the same seed, and the same per-token log-probs to 1e-6."""

import copy
from types import SimpleNamespace

import pytest
import torch

from grpo_runtime.prefill import Sharing, can_share_cache, shared_prompt_cache, stochastic_forward
from grpo_runtime.rollout import crop_after_first_eos, eos_token_ids, generation_config, pad_rows, sample_completions
from grpo_runtime.rollout import tokenize_prompts
from grpo_runtime.tiny import build_model, build_tokenizer

# Different lengths, so the batch is left-padded; rows interleaved, so the copies of a prompt are not adjacent.
PROMPTS = ["say cat", "please say the word star", "say dog please"]


def settings(**overrides):
    values = dict(max_completion_length=8, temperature=1.0, top_p=1.0, top_k=0, min_p=None, repetition_penalty=1.0,
                  cache_implementation=None, generation_kwargs=None)
    return SimpleNamespace(**{**values, **overrides})


@pytest.fixture(scope="module")
def tiny():
    tokenizer = build_tokenizer()
    return build_model(tokenizer).train(), tokenizer  # train mode, as during training


def batch(tokenizer, copies=4):
    prompt_lists = tokenize_prompts(tokenizer, PROMPTS * copies, None)
    input_ids = pad_rows(prompt_lists, tokenizer.pad_token_id, "left")
    attention_mask = pad_rows([[1] * len(p) for p in prompt_lists], 0, "left")
    return prompt_lists, input_ids, attention_mask


def generate(model, input_ids, attention_mask, gen_config, cache=None):
    """Plain `generate` (or from `cache`), returning the sequences and each step's raw logits."""
    gen_config = copy.deepcopy(gen_config)
    gen_config.return_dict_in_generate, gen_config.output_logits = True, True
    extra = {} if cache is None else {"past_key_values": cache}
    with torch.inference_mode():
        return model.generate(input_ids=input_ids, attention_mask=attention_mask, generation_config=gen_config,
                              **extra)


def test_sharing_maps_rows_to_distinct_prompts():
    sharing = Sharing.of([[1, 2], [3], [1, 2], [3], [4]])
    assert sharing.leaders.tolist() == [0, 1, 4] and sharing.owners.tolist() == [0, 1, 0, 1, 2]
    assert sharing.saves_work and not Sharing.of([[1], [2]]).saves_work


def test_greedy_completions_equal_plain_generate(tiny):
    model, tokenizer = tiny
    eos_ids = eos_token_ids(tokenizer, model)
    gen_config = generation_config(settings(top_k=1), tokenizer, eos_ids)
    prompt_lists, input_ids, attention_mask = batch(tokenizer)
    assert can_share_cache(model, gen_config) and Sharing.of(prompt_lists).saves_work  # the shared path runs
    with torch.no_grad():
        shared = sample_completions(model, prompt_lists, gen_config, tokenizer.pad_token_id, eos_ids)
    plain = generate(model, input_ids, attention_mask, gen_config).sequences[:, input_ids.size(1):]
    assert shared == crop_after_first_eos(plain, eos_ids)


def test_sampled_tokens_and_logprobs_equal_plain_generate(tiny):
    model, tokenizer = tiny
    gen_config = generation_config(settings(temperature=0.9, top_p=0.95), tokenizer, eos_token_ids(tokenizer, model))
    prompt_lists, input_ids, attention_mask = batch(tokenizer)
    torch.manual_seed(7)
    plain = generate(model, input_ids, attention_mask, gen_config)
    torch.manual_seed(7)
    with torch.inference_mode():
        cache = shared_prompt_cache(model, input_ids, attention_mask, Sharing.of(prompt_lists))
    assert cache is not None and cache.get_seq_length() == input_ids.size(1) - 1
    shared = generate(model, input_ids, attention_mask, gen_config, cache)
    assert torch.equal(shared.sequences, plain.sequences)
    assert len(shared.logits) == len(plain.logits) == 8
    tokens = plain.sequences[:, input_ids.size(1):]  # [R, 8]
    ours = torch.stack([torch.log_softmax(step, -1) for step in shared.logits], 1)  # [R, 8, V]
    theirs = torch.stack([torch.log_softmax(step, -1) for step in plain.logits], 1)
    token_logps = [logps.gather(-1, tokens.unsqueeze(-1)) for logps in (ours, theirs)]
    assert torch.allclose(*token_logps, atol=1e-6, rtol=0)
    assert torch.allclose(ours, theirs, atol=1e-5, rtol=0)  # and the whole distributions


def test_dropout_or_another_cache_turns_sharing_off(tiny):
    model, tokenizer = tiny
    gen_config = generation_config(settings(), tokenizer, eos_token_ids(tokenizer, model))
    noisy = build_model(tokenizer)
    noisy.config.attention_dropout = 0.1  # applied functionally in train mode
    assert stochastic_forward(noisy.train()) and not can_share_cache(noisy, gen_config)
    assert not stochastic_forward(noisy.eval()) and can_share_cache(noisy, gen_config)
    with_module = torch.nn.Sequential(torch.nn.Dropout(0.1))
    with_module.config = model.config
    assert stochastic_forward(with_module.train())
    assert not can_share_cache(model, generation_config(settings(cache_implementation="static"), tokenizer, [3]))

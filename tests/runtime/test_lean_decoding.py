"""The lean decoding loop (grpo_runtime.generation.decode) against transformers' own `generate`, on the real tiny model:
for every sampling knob the same tokens for the same seed and the same RNG state afterwards; the processors it
calls directly give what LogitsProcessorList gives; anything it does not cover falls back to generate's loop."""

import copy

import pytest
import torch

from grpo_runtime.generation.decode import LeanSampler, Route, plain_dynamic_cache
from grpo_runtime.generation.prefill import Sharing
from grpo_runtime.generation.rollout import crop_after_first_eos, eos_token_ids, generation_config, sample_completions
from tests.support.tiny import build_model

from .helpers import generation_settings as settings
from .helpers import prompt_batch

KNOBS = {
    "defaults": {},
    "temperature": dict(temperature=0.7),
    "top_k": dict(top_k=5),
    "top_p": dict(top_p=0.8),
    "min_p": dict(min_p=0.05),
    "repetition_penalty": dict(repetition_penalty=1.3),
    "all together": dict(temperature=1.3, top_k=12, top_p=0.9, min_p=0.02, repetition_penalty=0.9),
    "min_new_tokens": dict(generation_kwargs={"min_new_tokens": 6}),
    "greedy": dict(generation_kwargs={"do_sample": False}),
}


def seeded(seed, run):
    """Sequences of `run()` from a seeded global RNG, and the RNG state it leaves."""
    torch.manual_seed(seed)
    with torch.inference_mode():
        sequences = run()
    return sequences, torch.get_rng_state()


def frequent_eos(tokenizer, model):
    """EOS plus two common words, so that rows finish at different steps and the loop pads finished rows."""
    return eos_token_ids(tokenizer, model) + tokenizer.convert_tokens_to_ids(["the", "cat"])


@pytest.mark.parametrize("knob", KNOBS)
def test_same_tokens_and_rng_state_as_generate(tiny_policy, knob):
    model, tokenizer = tiny_policy
    gen_config = generation_config(settings(**KNOBS[knob]), tokenizer, frequent_eos(tokenizer, model))
    prompt_lists, batch = prompt_batch(tokenizer)
    assert Route.choose(model, gen_config) == Route(lean=True, share=True)
    plain, plain_rng = seeded(5, lambda: model.generate(**batch, generation_config=gen_config))
    lean, lean_rng = seeded(
        5, lambda: model.generate(**batch, generation_config=gen_config, custom_generate=LeanSampler(None))
    )
    assert torch.equal(lean, plain) and torch.equal(lean_rng, plain_rng)  # bit for bit, RNG included
    shared, _ = seeded(
        5,
        lambda: model.generate(
            **batch, generation_config=gen_config, custom_generate=LeanSampler(Sharing.of(prompt_lists))
        ),
    )
    assert torch.equal(shared, plain)  # logits within ~1e-7: the same draws
    new = plain[:, batch["input_ids"].size(1) :]
    if knob != "min_new_tokens":  # rows end early and at different steps: finished rows are padded
        ended = [len(row) for row in crop_after_first_eos(new, gen_config.eos_token_id)]
        assert min(ended) < new.size(1)


def test_dropout_in_train_mode_draws_like_generate(tiny_policy):
    """Dropout draws from the same RNG as sampling: without shared prefill the forward passes are the same, so
    the tokens and the RNG state still match generate's."""
    _, tokenizer = tiny_policy
    model = build_model(tokenizer)
    model.config.attention_dropout = 0.3
    model.train()
    gen_config = generation_config(settings(), tokenizer, eos_token_ids(tokenizer, model))
    _, batch = prompt_batch(tokenizer)
    plain = seeded(9, lambda: model.generate(**batch, generation_config=gen_config))
    lean = seeded(9, lambda: model.generate(**batch, generation_config=gen_config, custom_generate=LeanSampler(None)))
    assert torch.equal(lean[0], plain[0]) and torch.equal(lean[1], plain[1])


@pytest.mark.parametrize("knob", KNOBS)
def test_processors_called_directly_equal_logits_processor_list(tiny_policy, knob):
    """The loop calls generate's processors one by one; LogitsProcessorList.__call__ gives the same scores."""
    model, tokenizer = tiny_policy
    gen_config = generation_config(settings(**KNOBS[knob]), tokenizer, eos_token_ids(tokenizer, model))
    captured = {}

    def capture(model, input_ids, logits_processor, stopping_criteria, generation_config, **model_kwargs):
        captured.update(processors=logits_processor, input_ids=input_ids)
        return input_ids

    _, batch = prompt_batch(tokenizer)
    model.generate(**batch, generation_config=gen_config, custom_generate=capture)
    processors, ids = captured["processors"], captured["input_ids"]
    assert len(processors) == (
        0 if knob in ("defaults", "greedy") else 2 if knob == "min_new_tokens" else 5 if knob == "all together" else 1
    )
    logits = torch.randn(ids.size(0), len(tokenizer), generator=torch.Generator().manual_seed(1)) * 3
    direct = logits.clone()
    for processor in processors:
        direct = processor(ids, direct)
    assert torch.equal(direct, processors(ids, logits.clone()))


def test_completions_match_generate_with_padding_multiple_and_fallbacks(tiny_policy):
    """Through sample_completions: the lean path, and the settings it hands back to generate's own loop (a static
    cache, beam search), give generate's completions."""
    model, tokenizer = tiny_policy
    eos_ids = eos_token_ids(tokenizer, model)
    cases = [
        settings(top_k=1),
        settings(top_k=1, cache_implementation="static"),
        settings(generation_kwargs={"do_sample": False, "num_beams": 2}),
    ]
    for case in cases:
        gen_config = generation_config(case, tokenizer, eos_ids)
        prompt_lists, batch = prompt_batch(tokenizer, multiple=4)
        with torch.inference_mode():
            expected = model.generate(**batch, generation_config=copy.deepcopy(gen_config))
        ours = sample_completions(model, prompt_lists, gen_config, tokenizer.pad_token_id, eos_ids, 4)
        assert ours == crop_after_first_eos(expected[:, batch["input_ids"].size(1) :], eos_ids)
    assert Route.choose(model, generation_config(cases[2], tokenizer, eos_ids)) == Route(lean=False, share=False)


def test_what_the_lean_loop_leaves_to_generate(tiny_policy):
    from transformers import DynamicCache, StaticCache

    model, tokenizer = tiny_policy
    eos_ids = eos_token_ids(tokenizer, model)
    for kwargs in (
        {"num_beams": 2},
        {"return_dict_in_generate": True},
        {"output_attentions": True},
        {"num_return_sequences": 2},
        {"prefill_chunk_size": 4},
    ):
        assert not Route.choose(
            model, generation_config(settings(generation_kwargs=kwargs), tokenizer, eos_ids)
        ).lean, kwargs
    assert Route.choose(torch.nn.Linear(2, 2), generation_config(settings(), tokenizer, eos_ids)) == Route(False, False)
    assert plain_dynamic_cache(DynamicCache(config=model.config))
    assert not plain_dynamic_cache(StaticCache(config=model.config, max_cache_len=8))


def test_the_route_is_decided_once_per_model_config_and_mode(tiny_policy, monkeypatch):
    """Route.choose is asked every generation batch; it decides again only for a new config or a mode switch
    (eval mode turns dropout off, which changes whether the prompt cache may be shared)."""
    model, tokenizer = tiny_policy
    model = copy.deepcopy(model)
    model.config.attention_dropout = 0.1  # dropout in train mode: each row's forward pass is random
    decided = []
    original = Route.decide.__func__
    monkeypatch.setattr(
        Route, "decide", classmethod(lambda cls, m, c: decided.append(m.training) or original(cls, m, c))
    )
    eos_ids = eos_token_ids(tokenizer, model)
    gen_config = generation_config(settings(), tokenizer, eos_ids)
    model.train()
    in_training = {Route.choose(model, gen_config) for _ in range(3)}
    model.eval()
    in_eval = {Route.choose(model, gen_config) for _ in range(3)}
    assert decided == [True, False]
    assert in_training == {Route(lean=True, share=False)} and in_eval == {Route(lean=True, share=True)}
    Route.choose(model, generation_config(settings(), tokenizer, eos_ids))
    assert decided == [True, False, False]  # a new config object is decided afresh


def test_the_prepared_decoding_mask_is_the_mask_transformers_builds(tiny_policy):
    """For one new token per row, create_causal_mask turns the padded 2-D mask into exactly the [R, 1, 1, L]
    booleans the lean loop passes instead; without padding transformers passes no mask, and neither does it."""
    from transformers import DynamicCache
    from transformers.masking_utils import create_causal_mask

    from grpo_runtime.generation.decode import prepared_mask_applies

    model, tokenizer = tiny_policy
    _, batch = prompt_batch(tokenizer)
    input_ids, mask = batch["input_ids"], batch["attention_mask"]
    assert (mask == 0).any(), "the prompts should need padding"
    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        model(input_ids=input_ids, attention_mask=mask, past_key_values=cache)
        step_mask = torch.cat([mask, mask.new_ones((mask.size(0), 1))], dim=-1)
        embeds = model.get_input_embeddings()(input_ids[:, -1:])
        built = create_causal_mask(
            config=model.config,
            inputs_embeds=embeds,
            attention_mask=step_mask,
            past_key_values=cache,
            position_ids=torch.full_like(input_ids[:, -1:], 99),
        )
    assert prepared_mask_applies(model, cache, step_mask)
    assert built.dtype == torch.bool and torch.equal(built, step_mask[:, None, None, :].bool())
    assert not prepared_mask_applies(model, cache, torch.ones_like(step_mask))
    eager = copy.deepcopy(model)
    eager.config._attn_implementation = "eager"
    assert not prepared_mask_applies(eager, cache, step_mask)

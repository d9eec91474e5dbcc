"""use_transformers_continuous_batching: completions from the policy's generate_batch (transformers' paged,
continuously batched generation), in the order of the prompt rows and with the transformers path's settings; a
run trains with it and says so in run_info.json; what it cannot do is refused before anything loads."""

import contextlib
import json
from types import SimpleNamespace

import pytest

from grpo_runtime.generation.continuous import (
    ContinuousBatchingBackend,
    continuous_batching_settings,
    cut_after_first_eos,
)
from grpo_runtime.generation.rollout import generation_config, sample_completions
from grpo_runtime.support import assess

from .helpers import base_settings, generation_settings, prompt_batch, read_metrics, validated, write_prompts


def backend_for(model, tokenizer, config):
    eos = [tokenizer.eos_token_id]
    parts = SimpleNamespace(
        policy=model,
        generation_config=generation_config(config, tokenizer, eos),
        eos_ids=eos,
        autocast=contextlib.nullcontext,
    )
    run = SimpleNamespace(
        transformers_continuous_batching_config={"use_cuda_graph": False},
        activation_checkpointing=False,
        activation_checkpointing_kwargs=None,
        gradient_checkpointing=False,
        gradient_checkpointing_kwargs=None,
    )
    return ContinuousBatchingBackend(parts, run), parts


def test_greedy_completions_equal_plain_generate_row_for_row(tiny_policy):
    """Greedy decoding leaves no randomness: each row's completion must be generate's own, in the same order
    (prompts of three lengths, interleaved), cut after the first EOS."""
    model, tokenizer = tiny_policy
    config = generation_settings(max_completion_length=8, generation_kwargs={"do_sample": False})
    backend, parts = backend_for(model, tokenizer, config)
    prompt_lists, _ = prompt_batch(tokenizer, copies=2)
    samples = backend.generate(prompt_lists, num_generations=2, step=0)
    expected = sample_completions(model, prompt_lists, parts.generation_config, tokenizer.pad_token_id, parts.eos_ids)
    assert samples.completions == expected and samples.logprobs is None
    assert all(0 < len(c) <= 8 for c in samples.completions)


def test_sampled_completions_keep_the_length_limit_and_stop_at_eos(tiny_policy):
    model, tokenizer = tiny_policy
    backend, parts = backend_for(model, tokenizer, generation_settings(max_completion_length=6))
    prompt_lists, _ = prompt_batch(tokenizer, copies=4)
    completions = backend.generate(prompt_lists, num_generations=4, step=0).completions
    assert len(completions) == len(prompt_lists) and all(0 < len(c) <= 6 for c in completions)
    assert all(tokenizer.eos_token_id not in c[:-1] for c in completions)


def test_settings_default_to_trls_memory_share_and_read_json_strings():
    given = SimpleNamespace(transformers_continuous_batching_config='{"max_memory_percent": 0.4, "use_cuda_graph": 0}')
    assert continuous_batching_settings(given) == {"max_memory_percent": 0.4, "use_cuda_graph": 0}
    assert continuous_batching_settings(SimpleNamespace(transformers_continuous_batching_config=None)) == {
        "max_memory_percent": 0.5
    }
    assert cut_after_first_eos([5, 2, 7, 2], [2]) == [5, 2] and cut_after_first_eos([5, 6], [2]) == [5, 6]


@pytest.mark.slow
@pytest.mark.parametrize("bf16", [False, True])  # bf16 autocast on the float32-loaded tiny model
def test_a_run_trains_with_continuous_batching(tmp_path, tiny_model_dir, bf16):
    from grpo_runtime.train import main

    settings = {
        **base_settings(tiny_model_dir, write_prompts(tmp_path / "data.jsonl"), tmp_path / "out"),
        "bf16": bf16,
        "max_steps": 2,
        "save_steps": 100,
        "use_transformers_continuous_batching": True,
        "transformers_continuous_batching_config": {"use_cuda_graph": False, "max_memory_percent": 0.4},
    }
    result = validated(settings)
    assert not [d for d in assess(result) if d.severity == "error"]
    main(result.config, result.plan)
    metrics = read_metrics(tmp_path / "out")
    assert [m["step"] for m in metrics if "loss" in m] == [1, 2]
    assert all(0 < m["completions/mean_length"] <= 4 for m in metrics if "completions/mean_length" in m)
    info = json.loads((tmp_path / "out" / "run_info.json").read_text())
    assert info["generation_backend"] == "transformers-continuous-batching"


def refusals(settings: dict, world_size: int = 1) -> dict[str, str]:
    return {d.code: d.message for d in assess(validated(settings, world_size), "launch") if d.severity == "error"}


def test_sharded_weights_and_unknown_settings_are_refused_before_start(tmp_path, tiny_model_dir):
    base = {
        **base_settings(tiny_model_dir, tmp_path / "d.jsonl", tmp_path / "o"),
        "use_transformers_continuous_batching": True,
    }
    assert refusals(base) == {}
    sharded = refusals({**base, "fsdp": "full_shard"}, world_size=2)
    assert "FSDP, ZeRO-3" in sharded.get("GRPO-U002", "")
    wrong = refusals({**base, "transformers_continuous_batching_config": {"max_memory_fraction": 0.4}})
    assert any("max_memory_fraction" in message for message in wrong.values())
    assert refusals({**base, "use_transformers_continuous_batching": False, "use_transformers_paged": True}) == {}

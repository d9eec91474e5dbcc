"""Reward functions: built-ins, name resolution, the calling convention, None handling, reward models."""

import functools
import math
import sys

import pytest
import torch

from grpo_runtime.data import reward_library as lib
from grpo_runtime.data.rewards import REGISTRY, RewardModel, RunState, resolve_reward_func, reward_name, score


def msg(text):
    return [{"role": "assistant", "content": text}]


@pytest.mark.skipif(lib.MATH_VERIFY_AVAILABLE, reason="checks the documented fallback used without math-verify")
def test_accuracy_fallback_is_a_normalised_exact_match():
    completions = [
        msg(r"so \boxed{\frac{1}{3}}."),
        msg(r"\boxed{\dfrac{1}{2}}"),
        msg("The answer is 1,000"),
        msg(r"$\left( 2 \right)$"),
        msg("anything"),
    ]
    solutions = [r"\frac{1}{3}", r"\frac{1}{3}", "1000", "(2)", "  "]
    assert lib.accuracy_reward(completions, solutions) == [1.0, 0.0, 0.0, 1.0, None]
    assert lib.accuracy_reward([msg(r"\boxed{1,000}")], ["1000"]) == [1.0]


def test_reasoning_accuracy_needs_the_reasoning_to_close():
    completions = [msg(r"<think>\boxed{7}</think> \boxed{7}"), msg(r"<think> \boxed{7}"), msg(r"<think>x</think> 8")]
    assert lib.reasoning_accuracy_reward(completions, ["7", "7", "7"]) == [1.0, 0.0, 0.0]


def test_think_format():
    completions = [
        msg("<think>\nreasoning\n</think>\nanswer"),
        msg("<think>\nreasoning\nanswer"),
        msg("<think>a</think><think>b</think>"),
        "plain <think>x</think>",
    ]
    assert lib.think_format_reward(completions) == [1.0, 0.0, 0.0, 0.0]


def test_soft_overlong_punishment_of_the_trl_script():
    punish = REGISTRY["get_soft_overlong_punishment"]()
    lengths = [10, 1024, 1025, 1152, 1280, 1281]
    assert punish(completion_ids=[[0] * n for n in lengths]) == [0.0, 0.0, -1 / 256, -0.5, -1.0, -1.0]
    assert reward_name(punish) == "soft_overlong_punishment_reward"


def test_names_dotted_paths_and_unknown_names(tmp_path, monkeypatch):
    (tmp_path / "my_rewards.py").write_text("def shout(completions, **kw):\n    return [1.0] * len(completions)\n")
    monkeypatch.chdir(tmp_path)  # dotted paths are imported with the current directory on sys.path, like TRL
    monkeypatch.delitem(sys.modules, "my_rewards", raising=False)  # restored (or dropped) after the test
    assert resolve_reward_func("my_rewards.shout")(completions=["a", "b"]) == [1.0, 1.0]
    assert resolve_reward_func("think_format_reward") is lib.think_format_reward
    with pytest.raises(ValueError, match="unknown reward function 'nope'"):
        resolve_reward_func("nope")
    with pytest.raises(ValueError, match="could not load"):
        resolve_reward_func("my_rewards.missing")
    with pytest.raises(ValueError, match="unknown"):
        resolve_reward_func("my_rewards.shout", allow_import=False)
    assert reward_name(functools.partial(lib.accuracy_reward, x=1)) == "accuracy_reward"


def test_score_calls_every_function_with_columns_and_turns_none_into_nan():
    seen = {}

    def partial_scorer(prompts, completions, completion_ids, target, trainer_state, log_metric, **kw):
        seen.update(target=target, step=trainer_state.global_step, ids=completion_ids)
        log_metric("my_metric", 2.0)
        return [1.0, None]

    async def async_scorer(completions, **kw):
        return [0.5] * len(completions)

    logged = []
    rewards = score(
        [partial_scorer, async_scorer],
        ["p", "q"],
        ["a", "b"],
        [[1], [2, 3]],
        {"target": ["x", "y"]},
        RunState(global_step=7),
        lambda name, value: logged.append((name, value)),
    )
    assert rewards[:, 1].tolist() == [0.5, 0.5] and rewards[0, 0] == 1.0 and math.isnan(rewards[1, 0])
    assert seen == {"target": ["x", "y"], "step": 7, "ids": [[1], [2, 3]]} and logged == [("my_metric", 2.0)]
    with pytest.raises(ValueError, match="returned 1 rewards but 2"):
        score([lambda **kw: [1.0]], ["p", "q"], ["a", "b"], [[1], [2]], {}, RunState(), None)


def test_reward_model_scores_prompt_plus_completion(tmp_path):
    from transformers import AutoModelForSequenceClassification, LlamaConfig

    from tests.support.tiny import build_tokenizer

    tokenizer = build_tokenizer()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        num_labels=1,
        pad_token_id=tokenizer.pad_token_id,
    )
    AutoModelForSequenceClassification.from_config(config).save_pretrained(tmp_path / "rm")
    tokenizer.save_pretrained(tmp_path / "rm")
    model = RewardModel(str(tmp_path / "rm"), "cpu")
    assert model.__name__ == "rm"
    plain = model(prompts=["say cat ", "say dog "], completions=["cat", "dog dog"])
    chat = model(prompts=[[{"role": "user", "content": "say cat"}]], completions=[msg("cat")])
    ids = tokenizer(["say cat cat"], add_special_tokens=False, return_tensors="pt")
    with torch.no_grad():
        direct = model.model(**ids).logits[0, 0].item()
    assert plain[0] == pytest.approx(direct, abs=1e-6) and plain[0] != plain[1] and len(chat) == 1


def test_a_reward_model_loads_with_the_runs_dtype_attention_and_model_init_kwargs(tmp_path):
    """As `trl grpo` loads it: dtype, attn_implementation and model_init_kwargs apply; the policy's revision not."""
    from types import SimpleNamespace

    from grpo_runtime.setup import reward_model_kwargs

    config = SimpleNamespace(
        model_revision="abc123",
        trust_remote_code=False,
        attn_implementation="eager",
        dtype="bfloat16",
        model_init_kwargs={"low_cpu_mem_usage": True},
    )
    assert reward_model_kwargs(config) == dict(
        trust_remote_code=False, attn_implementation="eager", dtype=torch.bfloat16, low_cpu_mem_usage=True
    )

"""Generation post-processing, rewards and advantages against TRL's `_generate_and_score_completions`, with
generation replaced by fixed completions (grpo-runtime.md §10.2 oracles 3 and 4)."""

import math

import pytest
import torch

from grpo_runtime.generation.rollout import build_rollout, crop_after_first_eos
from grpo_runtime.training.advantages import compute_advantages, reward_metrics
from grpo_runtime.training.batch import completion_metrics

from .trl_harness import build_trainer, prompt_dataset

pytestmark = pytest.mark.oracle
NAN = float("nan")
FIXED = {"r1": [1.0, 0.0, None, 2.0, 2.0, 2.0], "r2": [0.5, None, None, 0.0, 1.0, None]}


def r1(completions, **kwargs):
    return FIXED["r1"][: len(completions)]


def r2(completions, **kwargs):
    return FIXED["r2"][: len(completions)]


@pytest.fixture(scope="module")
def trainer(tiny_model_dir, tmp_path_factory):
    return build_trainer(
        tiny_model_dir,
        tmp_path_factory.mktemp("trl_scoring"),
        reward_funcs=(r1, r2),
        per_device_train_batch_size=6,
        num_generations=3,
        max_completion_length=5,
    )


def fixed_completions(tokenizer):
    """After-EOS tokens, no EOS (truncated), EOS first, a pad after EOS, EOS last, no EOS."""
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    return torch.tensor(
        [
            [5, 6, eos, 7, 8],
            [5, 6, 7, 8, 9],
            [eos, 4, 4, 4, 4],
            [9, eos, pad, pad, pad],
            [4, 4, 4, 4, eos],
            [4, 5, 6, 7, 8],
        ]
    )


def trl_generation_batch(trainer, completions, **attributes):
    saved = {k: getattr(trainer, k) for k in attributes}
    for k, v in attributes.items():
        setattr(trainer, k, v)
    trainer.model.generate = lambda **kw: torch.cat([kw["input_ids"], completions[: kw["input_ids"].size(0)]], 1)
    data = prompt_dataset(2)
    rows = [dict(data[0]) for _ in range(3)] + [dict(data[1]) for _ in range(3)]
    trainer._metrics["train"].clear()
    trainer.model.train()  # generation and scoring happen in train mode
    try:
        out = trainer._generate_and_score_completions(rows)
    finally:
        del trainer.model.generate
        for k, v in saved.items():
            setattr(trainer, k, v)
    return out, {k: v[-1] for k, v in trainer._metrics["train"].items()}


def close(a, b, tol=1e-6):
    return (a is None or math.isnan(a)) and (b is None or math.isnan(b)) or abs(a - b) <= tol


@pytest.mark.parametrize("aggregation", ["sum_then_normalize", "normalize_then_sum"])
@pytest.mark.parametrize("scale_rewards", ["group", "batch", "none"])
@pytest.mark.parametrize("weights", [(1.0, 1.0), (1.0, 0.5)])
def test_advantages_and_reward_metrics_match_trl(trainer, aggregation, scale_rewards, weights):
    completions = fixed_completions(trainer.processing_class)
    out, trl_metrics = trl_generation_batch(
        trainer,
        completions,
        scale_rewards=scale_rewards,
        multi_objective_aggregation=aggregation,
        reward_weights=torch.tensor(weights),
    )
    rewards = torch.tensor([[NAN if v is None else v for v in FIXED[k]] for k in ("r1", "r2")]).T  # [6, 2]
    result = compute_advantages(rewards, torch.tensor(weights), 3, scale_rewards, aggregation)
    assert torch.allclose(result.advantages, out["advantages"], atol=1e-6, rtol=0)
    ours = reward_metrics(rewards, torch.tensor(weights), ["r1", "r2"], result)
    for name, value in ours.items():
        assert close(value, trl_metrics[name]), (name, value, trl_metrics[name])


@pytest.mark.parametrize("mask_truncated", [False, True])
def test_eos_cropping_masks_and_length_metrics_match_trl(trainer, mask_truncated):
    tokenizer = trainer.processing_class
    completions = fixed_completions(tokenizer)
    out, trl_metrics = trl_generation_batch(trainer, completions, mask_truncated_completions=mask_truncated)
    eos_ids = trainer.eos_token_ids
    lists = crop_after_first_eos(completions, eos_ids)
    prompt_lists = [[1, 2, 3]] * len(lists)
    rollout = build_rollout(prompt_lists, lists, tokenizer.pad_token_id, eos_ids, mask_truncated)
    assert torch.equal(rollout.completion_ids, out["completion_ids"])
    assert torch.equal(rollout.completion_mask, out["completion_mask"])
    assert int(rollout.completion_mask.sum()) == int(out["num_items_in_batch"])
    for name, value in completion_metrics(rollout.completion_lengths, rollout.truncated).items():
        assert close(value, trl_metrics[name]), (name, value, trl_metrics[name])
    # masking truncated rows leaves the advantages alone: they still count in their group's statistics
    assert out["advantages"].abs().sum() > 0


def test_builtin_rewards_agree_with_trl():
    from trl.rewards import get_soft_overlong_punishment, think_format_reward

    from grpo_runtime.data.rewards import REGISTRY

    texts = [
        "<think>\nr\n</think>\na",
        "<think>\nr\na",
        "<think>a</think><think>b</think>",
        "x <think>y</think>",
        "<think></think>",
    ]
    completions = [[{"role": "assistant", "content": t}] for t in texts]
    assert REGISTRY["think_format_reward"]()(completions=completions) == think_format_reward(completions)
    ids = [[0] * n for n in (0, 500, 1024, 1025, 1100, 1280, 1281, 4000)]
    ours = REGISTRY["get_soft_overlong_punishment"]()(completion_ids=ids)
    assert ours == get_soft_overlong_punishment(max_completion_len=1280, soft_punish_cache=256)(completion_ids=ids)

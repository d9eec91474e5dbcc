"""A few optimizer steps of grpo_runtime and of TRL's GRPOTrainer on the same tiny model, config and data, with
generation replaced by the same fixed completions and the buffer shuffle turned off on both sides (the only
random parts). Losses and final weights must agree (grpo-runtime.md §10.2 oracle 10, extended to lr > 0)."""

import pytest
import torch
from safetensors.torch import load_file

import grpo_runtime.generation.rollout
import grpo_runtime.recipe.generation
import grpo_runtime.train
import grpo_runtime.training.batch
from grpo_runtime.data.reward_library import target_word_reward
from grpo_runtime.generation.rollout import crop_after_first_eos
from grpo_runtime.launch.demo import demo_rows

from .helpers import base_settings, read_metrics, validated, write_prompts
from .trl_harness import build_trainer

pytestmark = [pytest.mark.oracle, pytest.mark.slow]
grpo_trainer_module = pytest.importorskip("trl.trainer.grpo_trainer")


def fixed_completions(eos):
    """8 rows (b * s): some stop at EOS, some run to max_completion_length, rewards differ within groups."""
    cat, star = 7, 14  # the demo's target words (grpo_runtime.model.tiny.VOCABULARY)
    return torch.tensor(
        [
            [cat, cat, eos, 0, 0],
            [13, cat, 14, 15, 16],
            [star, eos, 0, 0, 0],
            [20, 21, 22, star, 12],
            [cat, 17, 17, eos, 0],
            [12, 17, 12, 17, 12],
            [eos, 0, 0, 0, 0],
            [18, star, star, 13, eos],
        ]
    )


SHARED = dict(
    per_device_train_batch_size=4,
    num_generations=2,
    gradient_accumulation_steps=2,
    num_iterations=2,
    max_completion_length=5,
    temperature=0.7,
    beta=0.04,
    loss_type="dapo",
    learning_rate=0.5,
    max_steps=4,
    seed=3,
    optim="sgd",
    weight_decay=0.01,
    warmup_steps=1,
    logging_steps=1,
)
# SGD rather than Adam: Adam's first steps are close to sign(gradient), so a 1e-9 gradient on some weight can
# flip the sign of a full learning-rate step; SGD keeps the comparison linear in the gradients.


def record_eval_batch_losses(trainer) -> list[float]:
    losses, compute = [], trainer._compute_loss

    def recorded(model, inputs):
        loss = compute(model, inputs)
        if not model.training:
            losses.append(loss.item())
        return loss

    trainer._compute_loss = recorded
    return losses


@pytest.mark.parametrize(
    "variant",
    [
        dict(loss_type="dapo"),
        dict(loss_type="grpo", importance_sampling_level="sequence"),
        # the reference model drifts toward the policy after every step; generation 2 scores with the mixed weights
        dict(loss_type="dapo", sync_ref_model=True, ref_model_sync_steps=1, ref_model_mixup_alpha=0.5),
        # 8 micro-steps per epoch in windows of 3, 3, 2 (the last with current_gradient_accumulation_steps = 2);
        # step 4 starts the second epoch with the sampler's next permutation
        dict(loss_type="dr_grpo", gradient_accumulation_steps=3, steps_per_generation=1, num_iterations=1),
        # the adaptive entropy controller: closed gate on the first window, then the coefficient moves every step
        dict(
            loss_type="bnpo",
            use_adaptive_entropy=True,
            entropy_coef=0.05,
            entropy_target=10.0,
            top_entropy_quantile=0.5,
        ),
        # evaluation before training and every 2 steps: 6 test prompts x 2 completions in batches of 4
        dict(
            loss_type="dapo",
            eval_strategy="steps",
            eval_steps=2,
            eval_on_start=True,
            per_device_eval_batch_size=4,
            num_generations_eval=2,
        ),
        # the best checkpoint by an eval metric (larger is better for a name not ending in "loss"), kept from
        # save_total_limit's pruning and loaded back at the end: the final weights are the best step's
        dict(
            loss_type="dapo",
            eval_strategy="steps",
            eval_steps=1,
            per_device_eval_batch_size=4,
            num_generations_eval=2,
            save_strategy="steps",
            save_steps=1,
            save_total_limit=1,
            metric_for_best_model="kl",
            load_best_model_at_end=True,
        ),
    ],
)
def test_training_steps_match_trl(tmp_path, tiny_model_dir, monkeypatch, variant):
    from datasets import load_dataset

    data = write_prompts(tmp_path / "data" / "train.jsonl").parent
    write_prompts(data / "test.jsonl", demo_rows(repeats=1)[1:7])
    settings = {**SHARED, **variant}

    # --- TRL
    monkeypatch.setattr(grpo_trainer_module, "shuffle_sequence_dict", lambda batch: batch)
    splits = load_dataset(str(data))
    trainer = build_trainer(
        tiny_model_dir,
        tmp_path / "trl",
        reward_funcs=(target_word_reward,),
        dataset=splits["train"],
        eval_dataset=splits["test"],
        **settings,
    )
    completions = fixed_completions(trainer.processing_class.eos_token_id)
    trainer.model.generate = lambda **kw: torch.cat([kw["input_ids"], completions[: kw["input_ids"].size(0)]], 1)
    eval_batch_losses = record_eval_batch_losses(trainer)
    trainer.train()
    trl_logs = [h for h in trainer.state.log_history if "loss" in h]
    trl_evals = [h for h in trainer.state.log_history if "eval_loss" in h]
    trl_losses = [h["loss"] for h in trl_logs]
    trl_weights = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    trl_best = trainer.state.best_global_step
    trl_checkpoints = sorted(p.name for p in (tmp_path / "trl").glob("checkpoint-*"))

    # --- grpo_runtime
    monkeypatch.setattr(grpo_runtime.recipe.generation, "shuffle_rows", lambda batch: batch)
    monkeypatch.setattr(
        grpo_runtime.generation.rollout,
        "sample_completions",
        lambda model, prompts, config, pad, eos_ids, multiple=None: crop_after_first_eos(
            completions[: len(prompts)], eos_ids
        ),
    )
    ours = base_settings(tiny_model_dir, data, tmp_path / "ours")
    ours.update(settings, reward_funcs=["grpo_runtime.data.reward_library.target_word_reward"])
    result = validated(ours)
    # with num_iterations=2 a generation outlives an optimizer step, so old log-probs are computed and used
    assert result.plan.old_logprobs_needed == (settings["num_iterations"] > 1)
    grpo_runtime.train.main(result.config, result.plan)

    records = [r for r in read_metrics(tmp_path / "ours") if "loss" in r]
    evals = [r for r in read_metrics(tmp_path / "ours") if "eval_loss" in r]
    assert [r["loss"] for r in records] == pytest.approx(trl_losses, abs=1e-6)
    assert [r["step"] for r in evals] == [h["step"] for h in trl_evals]
    batches = len(eval_batch_losses) // max(len(evals), 1)
    for n, (mine, theirs) in enumerate(zip(evals, trl_evals)):
        # eval_loss is the plain mean of the batch losses. HF weights the last batch by len(test set) % batch size
        # (accelerate's remainder bookkeeping counts the test rows, not the num_generations_eval copies), which
        # over- or under-counts it; the batch losses themselves must match.
        assert mine["eval_loss"] == pytest.approx(
            sum(eval_batch_losses[n * batches : (n + 1) * batches]) / batches, abs=1e-6
        )
        shared = sorted(set(mine) & set(theirs) - {"epoch", "step", "eval_loss"})
        assert len(shared) > 15
        for k in shared:
            assert mine[k] == pytest.approx(theirs[k], abs=1e-6), (k, mine[k], theirs[k])
    for name in ("entropy", "kl", "entropy_coef", "policy_loss", "clip_ratio/region_mean", "reward"):
        mine = [r.get(name) for r in records]
        theirs = [h.get(name) for h in trl_logs]
        assert mine == pytest.approx(theirs, abs=1e-6), name
    if variant.get("use_adaptive_entropy"):  # entropy stays below the target: +entropy_coef_delta every step
        assert [r["entropy_coef"] for r in records] == pytest.approx([0.055, 0.06, 0.065, 0.07])
        assert all(r["policy_loss"] is not None for r in records)
    if variant.get("load_best_model_at_end"):  # the same best step, the same checkpoints kept
        import json

        assert 1 < trl_best < settings["max_steps"]  # neither the first nor the last: the choice is tested
        kept = sorted(p.name for p in (tmp_path / "ours").glob("checkpoint-*"))
        assert kept == trl_checkpoints == [f"checkpoint-{trl_best}"]
        state = json.loads((tmp_path / "ours" / kept[0] / "runtime_state.json").read_text())
        assert state["best_global_step"] == trl_best
    weights = load_file(str(tmp_path / "ours" / "model.safetensors"))
    moved = max(
        (trl_weights[k] - load_file(str(tiny_model_dir / "model.safetensors"))[k]).abs().max().item() for k in weights
    )
    assert moved > 1e-3  # the weights really trained
    for name, value in weights.items():
        assert torch.allclose(value, trl_weights[name], atol=1e-6, rtol=0), name

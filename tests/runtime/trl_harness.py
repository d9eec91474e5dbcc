"""Test-only harness that drives TRL 1.16's real GRPOTrainer code on hand-made tensors (the oracle).

Importing this module imports trl, which is slow; only the *_oracle test modules import it. The approach follows
grpo-runtime.md §10: build a tiny trainer once, then replace the model forward by fixed log-probs and entropies
and call `_compute_loss` directly.
"""

import pytest

trl = pytest.importorskip("trl", reason="the oracle tests need trl==1.16.0 (a test-only dependency)")

from datasets import Dataset  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

if trl.__version__ != "1.16.0":
    pytest.skip(f"the oracle tests target trl 1.16.0, found {trl.__version__}", allow_module_level=True)


def prompt_dataset(n: int = 8, conversational: bool = True) -> Dataset:
    words = ["cat", "dog", "sun", "moon", "tree", "fish", "bird", "star"]
    texts = [f"say {words[i % len(words)]}" for i in range(n)]
    prompts = [[{"role": "user", "content": t}] for t in texts] if conversational else texts
    return Dataset.from_dict({"prompt": prompts, "idx": list(range(n))})


def zero_reward(completions, **kwargs):
    return [0.0] * len(completions)


def build_trainer(
    model_dir, output_dir, reward_funcs=(zero_reward,), dataset=None, eval_dataset=None, callbacks=None, **overrides
) -> GRPOTrainer:
    """A CPU GRPOTrainer on the tiny saved model; `overrides` are GRPOConfig fields."""
    from transformers import AutoTokenizer

    settings = dict(
        output_dir=str(output_dir),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=5,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
        seed=0,
    )
    settings.update(overrides)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return GRPOTrainer(
        model=str(model_dir),
        reward_funcs=list(reward_funcs),
        args=GRPOConfig(**settings),
        train_dataset=dataset if dataset is not None else prompt_dataset(),
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        callbacks=callbacks,
    )


TRAINER_ATTRIBUTES = {
    "loss_type",
    "beta",
    "epsilon_low",
    "epsilon_high",
    "importance_sampling_level",
    "top_entropy_quantile",
    "off_policy_mask_threshold",
    "entropy_coef",
    "_entropy_bonus_enabled",
    "use_adaptive_entropy",
    "_last_world_entropy",
    "use_vllm",
    "vllm_importance_sampling_correction",
    "max_completion_length",
}


def trl_loss(trainer, inputs: dict, logps, entropies, *, train=True, grad_accum=1, **overrides):
    """TRL's `_compute_loss` on given log-probs/entropies. Overrides are trainer attributes (TRAINER_ATTRIBUTES)
    or, otherwise, GRPOConfig fields read at loss time. Returns (loss, {metric: last value})."""
    on_trainer = {k: v for k, v in overrides.items() if k in TRAINER_ATTRIBUTES}
    on_args = {k: v for k, v in overrides.items() if k not in TRAINER_ATTRIBUTES}
    saved = {k: getattr(trainer, k) for k in on_trainer}
    saved_args = {k: getattr(trainer.args, k) for k in on_args}
    for k, v in on_trainer.items():
        setattr(trainer, k, v)
    for k, v in on_args.items():
        setattr(trainer.args, k, v)
    trainer.current_gradient_accumulation_steps = grad_accum
    trainer.model.train(train)
    mode = "train" if train else "eval"
    trainer._metrics[mode].clear()
    trainer._get_per_token_logps_and_entropies = lambda *a, **k: (logps, entropies, None)
    try:
        loss = trainer._compute_loss(trainer.model, inputs)
    finally:
        del trainer._get_per_token_logps_and_entropies
        for k, v in saved.items():
            setattr(trainer, k, v)
        for k, v in saved_args.items():
            setattr(trainer.args, k, v)
        trainer.model.train(True)
    return loss, {k: v[-1] for k, v in trainer._metrics[mode].items()}

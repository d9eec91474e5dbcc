"""What verl does not check at all: GRPO with groups of one, step units, and the token budget of dynamic batches."""

from __future__ import annotations

from typing import Any, Iterator

from grpo_schema.dialects.verl.config import GROUP_ESTIMATORS, A, R
from grpo_schema.dialects.verl.rules.base import Finding, finding, rule
from grpo_schema.engine.diagnostics import Fix

TASK_REWARDS = "distillation.distillation_loss.use_task_rewards"


@rule("GRPO-Q050", "error", ("algorithm.adv_estimator", R + "n", "distillation.enabled", TASK_REWARDS))
def group_estimator_needs_groups(config: Any, ctx: Any) -> Iterator[Finding]:
    """A group-relative advantage estimator (grpo, rloo, ...) needs rollout.n > 1.

    The advantage compares each sample with the other samples of its prompt. With verl's default rollout.n=1 the
    group is one sample, its mean is the sample itself: GRPO's advantage is the raw score and the run silently
    becomes REINFORCE without a baseline (RLOO's is zero). verl accepts it; TRL refuses num_generations < 2.
    On-policy distillation without task rewards (distillation.enabled, distillation_loss.use_task_rewards false)
    learns from the teacher alone: the task advantage goes unused, and one sample per prompt is that recipe's own.
    """
    estimator = config["algorithm.adv_estimator"]
    distilling_only = config["distillation.enabled"] and not config[TASK_REWARDS]
    if estimator in GROUP_ESTIMATORS and config.n < 2 and not distilling_only:
        where = "verl's default" if not config.written(R + "n") else "set"
        yield finding(
            f"algorithm.adv_estimator is {estimator!r} but rollout.n is {config.n} ({where}): a group of "
            "one sample has no baseline",
            (R + "n", "algorithm.adv_estimator"),
            hint="GRPO recipes sample 4-16 completions per prompt; raise rollout.n (and keep "
            "train_batch_size x rollout.n divisible by the GPUs)",
            fixes=(Fix(set={R + "n": 8}, safe=False, title="set rollout.n=8"),),
        )


@rule(
    "GRPO-Q051",
    "info",
    (
        "trainer.total_training_steps",
        A + "optim.lr_warmup_steps",
        "data.train_batch_size",
        A + "ppo_mini_batch_size",
        A + "ppo_epochs",
    ),
)
def steps_count_rl_steps(config: Any, ctx: Any) -> Iterator[Finding]:
    """trainer.total_training_steps and actor.optim.lr_warmup_steps count RL steps, not optimizer steps.

    One RL step generates data.train_batch_size prompts and makes (train_batch_size / ppo_mini_batch_size) x
    ppo_epochs optimizer steps; the LR scheduler advances once per RL step, after the last of them. TRL's max_steps
    and warmup_steps count optimizer steps: a number carried over from a TRL recipe means something else here.
    """
    per_rl_step = (int(config["data.train_batch_size"]) // max(1, int(config[A + "ppo_mini_batch_size"]))) * int(
        config[A + "ppo_epochs"] or 1
    )
    if per_rl_step <= 1:
        return
    for key in ("trainer.total_training_steps", A + "optim.lr_warmup_steps"):
        value = config[key]
        if config.written(key) and isinstance(value, int) and value > 0:
            yield finding(
                f"{key} = {value} RL steps = {value * per_rl_step} optimizer steps ({per_rl_step} per RL step)",
                (key,),
                hint="in TRL's units (optimizer steps) this is "
                f"{'max_steps' if 'total' in key else 'warmup_steps'}={value * per_rl_step}",
            )


@rule(
    "GRPO-Q052",
    "warning",
    (
        A + "use_dynamic_bsz",
        A + "ppo_max_token_len_per_gpu",
        "data.max_prompt_length",
        "data.max_response_length",
        A + "ulysses_sequence_parallel_size",
        A + "fsdp_config.ulysses_sequence_parallel_size",
    ),
)
def dynamic_token_budget_holds_a_sample(config: Any, ctx: Any) -> Iterator[Finding]:
    """With dynamic batch size, ppo_max_token_len_per_gpu must hold at least one whole sample.

    Micro-batches are packed up to ppo_max_token_len_per_gpu tokens per GPU (times the Ulysses size); a sample of
    max_prompt_length + max_response_length tokens that does not fit gets a micro-batch of its own beyond the budget,
    and memory planned for the budget runs out. verl's own guideline is at least twice a sample.
    """
    if not config.dynamic:
        return
    budget = int(config[A + "ppo_max_token_len_per_gpu"]) * config.sequence_parallel
    sample = int(config["data.max_prompt_length"]) + int(config["data.max_response_length"])
    if budget < sample:
        yield finding(
            f"the dynamic batch budget ppo_max_token_len_per_gpu = {budget} tokens"
            f"{' (x Ulysses size)' if config.sequence_parallel > 1 else ''} is smaller than one sample of "
            f"max_prompt_length + max_response_length = {sample} tokens",
            (A + "ppo_max_token_len_per_gpu", "data.max_prompt_length", "data.max_response_length"),
            fixes=(
                Fix(
                    set={A + "ppo_max_token_len_per_gpu": 2 * sample},
                    safe=False,
                    title=f"set ppo_max_token_len_per_gpu={2 * sample}",
                ),
            ),
        )


@rule("GRPO-Q053", "error", ("data.train_batch_size", A + "ppo_mini_batch_size", A + "use_dynamic_bsz", R + "n"))
def mini_batch_within_train_batch_when_dynamic(config: Any, ctx: Any) -> Iterator[Finding]:
    """With dynamic batch size too, ppo_mini_batch_size must not exceed data.train_batch_size.

    verl skips its own check (GRPO-Q014) when use_dynamic_bsz is on, but the worker still cuts the RL step into
    mini-batches of ppo_mini_batch_size x rollout.n samples: a mini-batch larger than the whole step makes no whole
    mini-batch, so no optimizer step and no LR tick. Recipes written when the mini-batch counted samples (verl 0.2
    and earlier) have this shape.
    """
    if not config.dynamic:
        return
    prompts, mini, n = int(config["data.train_batch_size"]), int(config[A + "ppo_mini_batch_size"]), config.n
    if mini > prompts:
        old = n > 1 and mini % n == 0 and mini // n <= prompts
        fixes = (
            (Fix(set={A + "ppo_mini_batch_size": mini // n}, safe=False, title=f"set ppo_mini_batch_size={mini // n}"),)
            if old
            else ()
        ) + (Fix(set={A + "ppo_mini_batch_size": prompts}, safe=False, title=f"set ppo_mini_batch_size={prompts}"),)
        yield finding(
            f"actor.ppo_mini_batch_size ({mini} prompts) is larger than data.train_batch_size ({prompts}): "
            "an RL step holds no whole mini-batch, so no optimizer step (verl does not check this with "
            "use_dynamic_bsz)",
            (A + "ppo_mini_batch_size", "data.train_batch_size"),
            hint=(
                f"written for the old meaning? {mini} samples are {mini // n} prompts at rollout.n={n}"
                if old
                else "the mini-batch counts prompts, as train_batch_size does"
            ),
            fixes=fixes,
        )

"""The loop's next generation batch: generated and scored for this process's prompts, logged (the prompt
assignment, completions), shuffled and split into micro-batches; weights that diverged end the run by name."""

from __future__ import annotations

import json
import math

from grpo_runtime.data.datasets import dataset_rows
from grpo_runtime.data.rewards import RunState
from grpo_runtime.generation.backend import GenerationError
from grpo_runtime.outputs import completions
from grpo_runtime.outputs.checkpoint import Progress
from grpo_runtime.outputs.health import LiveHealth
from grpo_runtime.recipe.cadence import should_log
from grpo_runtime.training.batch import Grouping, generate_batch, shuffle_rows, split_rows
from grpo_runtime.training.parts import Parts
from grpo_runtime.training.sampler import process_rows


def generation_or_divergence(config, plan, parts, progress, micro, window, window_metrics, health):
    """The next generation; weights that diverged (NaN or infinite probabilities: sampling cannot go on) end the
    run with the run-health finding GRPO-A005 instead of torch's sampling traceback."""
    try:
        return new_generation(config, plan, parts, progress, micro, window, window_metrics, health)
    except RuntimeError as exc:
        if "probability tensor contains" not in str(exc):
            raise
        step = progress.global_step + 1
        if health is not None:
            health.diverged(step, str(exc).splitlines()[0], parts.output_dir)
        raise GenerationError(
            f"the model's next-token probabilities are NaN or infinite at step {step}: its weights diverged "
            f"(GRPO-A005); lower learning_rate and resume from a checkpoint before step {step}"
        ) from None


def new_generation(
    config, plan, parts: Parts, progress: Progress, micro: int, window, window_metrics, health: LiveHealth | None = None
):
    """Generate and score the next generation batch; return its micro-batches (shuffled, split) and its reward."""
    generation = micro // plan.generate_every_micro_steps
    indices = process_rows(
        parts.order.chunk(generation), plan.num_generations, parts.rank, plan.completions_per_process_per_generation
    )
    state = RunState(progress.global_step, parts.total_steps, window.epoch, progress.num_input_tokens_seen)
    generated = generate_batch(
        parts, config, plan, dataset_rows(parts.dataset, indices), state, Grouping.training(plan)
    )
    rewards = [[None if math.isnan(v) else v for v in row] for row in generated.rewards.tolist()]
    log_assignment(
        parts,
        dict(
            generation=generation,
            micro_step=micro,
            step=progress.global_step,
            rows=indices,
            rewards=rewards,
            advantages=generated.batch["advantages"].tolist(),
        ),
    )
    if config.log_completions:
        log_completions(config, parts, progress.global_step, generated, rewards, health=health)
    elif parts.accelerator.is_main_process and should_log(config, progress.global_step + 1, parts.total_steps, window):
        log_completions(
            config,
            parts,
            progress.global_step,
            generated,
            rewards,
            sample=completions.SAMPLE_GROUPS * plan.num_generations,
            health=health,
        )
    progress.num_input_tokens_seen += generated.tokens
    window_metrics.add(generated.metrics)
    window_metrics.set("num_tokens", progress.num_input_tokens_seen)
    return split_rows(shuffle_rows(generated.batch), plan.steps_per_generation), generated.metrics["reward"]


def log_assignment(parts: Parts, line: dict) -> None:
    """prompt_assignment/rank-P.jsonl: per generation, the dataset rows this process generated for, their raw
    rewards (null for None) and advantages. For audits, and for the tests of the distributed split."""
    folder = parts.output_dir / "prompt_assignment"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"rank-{parts.rank}.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


def log_completions(
    config, parts: Parts, step: int, generated, rewards: list[list], sample: int = 0, health: LiveHealth | None = None
) -> None:
    """log_completions: every prompt and completion of the generation with its rewards, total reward, advantage,
    length and truncation, gathered from all processes into completions.jsonl. `sample` > 0: only this many of
    the main process's rows, into completions-sample.jsonl, with no gathering (outputs/completions.py)."""
    batch = generated.batch
    stop_ids = set(parts.eos_ids) | {parts.tokenizer.pad_token_id}
    lengths, truncated = completions.rows_lengths(
        batch["completion_ids"], batch["completion_mask"], stop_ids, config.max_completion_length
    )
    rows = completions.completion_rows(
        step,
        parts.reward_names,
        parts.reward_weights.tolist(),
        generated.prompts,
        generated.completions,
        rewards,
        batch["advantages"].tolist(),
        lengths,
        truncated,
    )
    if sample:
        completions.append_rows(parts.output_dir, rows[:sample], sample=True)
        if health is not None:  # run health reads the rows live as `grpo health` reads the file
            health.completions(rows[:sample], sampled=True)
        return
    rows = parts.gather_object(rows)
    if parts.accelerator.is_main_process:
        completions.append_rows(parts.output_dir, rows)
        if health is not None:
            health.completions(rows, sampled=False)

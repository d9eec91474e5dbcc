"""The GRPO training recipe: set up, loop over optimizer steps, save.

    grpo_runtime.train.main(config, plan)

is what `python -m grpo_runtime FILE` runs in every process under `grpo launch` (and `grpo train` in-process). The loop follows TRL 1.16's
schedule: a generation batch is produced on micro-steps 0 (mod steps_per_generation * num_iterations), shuffled once,
split into steps_per_generation micro-batches and replayed num_iterations times; gradients accumulate over
gradient_accumulation_steps micro-steps per optimizer step.
"""

from __future__ import annotations

import json
import math
import signal
import sys
import time
from pathlib import Path

import torch

import grpo_runtime.distributed.sharding as sharding
import grpo_runtime.outputs.best as best
from grpo_runtime.data.datasets import dataset_rows
from grpo_runtime.data.rewards import RunState
from grpo_runtime.evaluate import evaluate
from grpo_runtime.generation.backend import GenerationError
from grpo_runtime.model.loading import mix_into_reference
from grpo_runtime.outputs import completions
from grpo_runtime.outputs.checkpoint import (
    Progress,
    load_checkpoint,
    load_weights,
    prune_checkpoints,
    resolve_resume,
    save_checkpoint,
)
from grpo_runtime.outputs.health import LiveHealth
from grpo_runtime.outputs.hub import HubPusher
from grpo_runtime.outputs.metrics import MetricWindow, loss_metrics, open_sinks
from grpo_runtime.outputs.reporters import requested_reporters
from grpo_runtime.outputs.run_info import write_run_info
from grpo_runtime.setup import build_parts
from grpo_runtime.training.batch import Grouping, generate_batch, shuffle_rows, split_rows
from grpo_runtime.training.parts import Parts
from grpo_runtime.training.sampler import optimizer_windows, process_rows
from grpo_runtime.training.step import data_loader_seed_draw, micro_step_loss, optimizer_step, update_entropy_controller


def main(config, plan, assessed: bool = False, launch: dict | None = None, script=None) -> Progress:
    """Train with a validated config (grpo_schema GRPORunConfig) and its RunPlan. Returns the final counters.
    Settings this runtime refuses raise support.CannotRun before anything loads (`assessed`: the caller has
    checked and reported them already). `launch` holds the file's `accelerate launch` keys; `script` is (profile
    name, its validated script arguments) when the config was validated with a training script's profile."""
    parts = build_parts(config, plan, assessed, launch, script)
    set_log_levels(config, parts.accelerator)
    parts.output_dir.mkdir(parents=True, exist_ok=True)
    pusher = HubPusher(config, parts.output_dir, parts.accelerator.is_main_process)
    pusher.start()
    progress, buffer = Progress(entropy_coef=config.entropy_coef), None
    resume = resolve_resume(config.resume_from_checkpoint, parts.output_dir)
    if resume is not None:
        progress, buffer = load_checkpoint(
            resume,
            accelerator=parts.accelerator,
            model=parts.model,
            optimizer=parts.optimizer,
            scheduler=parts.scheduler,
            reference=parts.reference if config.sync_ref_model else None,
        )
        best.forget_missing_best(progress)
    else:  # a fresh run starts fresh logs; a resumed one appends to them
        start_fresh_logs(parts)
    start_step = progress.global_step
    health = LiveHealth(config, parts.accelerator.is_main_process)
    if parts.accelerator.is_main_process:
        write_run_info(
            config, parts, resumed_from=None if resume is None else {"checkpoint": str(resume), "step": start_step}
        )
    if resume is not None:
        health.resumed(resume, start_step, parts.total_steps)
    sinks = []
    if parts.accelerator.is_main_process:
        write_resolved_config(config, parts.output_dir)
        sinks = open_sinks(
            parts.output_dir,
            requested_reporters(config.report_to),
            config.model_dump(mode="json"),
            config.run_name,
            config.project,
        )
    sinks.append(health)
    if config.eval_on_start and parts.eval_dataset is not None and progress.global_step == 0:
        write_record(parts, sinks, {"step": 0, "epoch": 0.0, **evaluate(config, plan, parts, progress, 0.0)})
    try:
        with JitCheckpoint(config.enable_jit_checkpoint) as stop:
            train_loop(config, plan, parts, progress, buffer, sinks, stop, pusher, health)
    finally:
        parts.backend.close()
        if parts.accelerator.is_main_process:
            for sink in sinks:
                sink.close()
    if resume is not None:
        health.resumed(resume, start_step, parts.total_steps, progress.global_step - start_step)
    parts.accelerator.wait_for_everyone()
    load_best_model(config, parts, progress)
    sharding.save_model(parts.accelerator, parts.model, parts.output_dir)
    if parts.accelerator.is_main_process:
        parts.tokenizer.save_pretrained(parts.output_dir)
        best.keep_only_best(parts.output_dir, config.save_total_limit, progress.best_model_checkpoint)
    parts.accelerator.end_training()
    pusher.finish()  # after everything is saved locally: a failed upload loses nothing
    return progress


def train_loop(
    config,
    plan,
    parts: Parts,
    progress: Progress,
    buffer,
    sinks,
    stop=None,
    pusher=None,
    health: LiveHealth | None = None,
) -> None:
    window_metrics = MetricWindow()
    sync_each_batch = parts.accelerator.gradient_state.plugin_kwargs.get("sync_each_batch", False)
    window_metrics.load_state_dict(progress.metric_window or window_metrics.state_dict())
    entropy_window, reward = None, float("nan")
    bar = progress_bar(config, parts, progress.global_step)
    for window in optimizer_windows(len(parts.dataset), plan, parts.total_steps, progress.global_step):
        started = time.perf_counter()
        if window.starts_epoch:
            data_loader_seed_draw()
        for micro in window.micro_steps:
            if buffer is None or micro % plan.generate_every_micro_steps == 0:
                buffer, reward = generation_or_divergence(
                    config, plan, parts, progress, micro, window, window_metrics, health
                )
            last = micro == window.micro_steps[-1]
            with sharding.accumulating(parts.accelerator, parts.model, last or sync_each_batch):
                out = micro_step_loss(
                    config, parts, buffer[micro % plan.steps_per_generation], progress, len(window.micro_steps)
                )
                sharding.backward(parts.accelerator, parts.model, out.loss, last)
            progress.loss_since_log += logged_loss(config, progress, out.loss.item())
            window_metrics.add(loss_metrics(out, parts.accelerator.reduce, parts.gather))
            if out.entropy_window is not None:
                entropy_window = out.entropy_window if entropy_window is None else entropy_window + out.entropy_window
            progress.micro_step = micro + 1
        learning_rate = parts.scheduler.get_last_lr()[0]
        grad_norm = optimizer_step(config, parts)
        if entropy_window is not None:
            update_entropy_controller(config, parts, progress, entropy_window, window_metrics)
            entropy_window = None
        progress.global_step, progress.steps_since_log = window.step, progress.steps_since_log + 1
        step_time = time.perf_counter() - started
        window_metrics.add({"step_time": step_time})
        after_step(
            config,
            plan,
            parts,
            progress,
            window,
            buffer,
            window_metrics,
            sinks,
            dict(grad_norm=grad_norm, learning_rate=learning_rate),
            pusher,
        )
        if bar is not None:
            bar.set_postfix(reward=f"{reward:.3f}", step_time=f"{step_time:.2f}s", refresh=False)
            bar.update(1)
        if stop is not None and stop.requested(parts.accelerator):
            save(config, plan, parts, progress, buffer, window_metrics, pusher, window.epoch_progress)  # then stop
            if parts.accelerator.is_main_process:
                print(f"grpo: SIGTERM: saved checkpoint-{progress.global_step} and stopped", file=sys.stderr)
            break
        if health is not None and health.should_stop(parts.accelerator):
            if parts.accelerator.is_main_process:
                print(
                    f"grpo: stopped after step {progress.global_step} on a fatal run-health finding "
                    f"(--stop-on-fatal); the last checkpoint before it is the one to resume",
                    file=sys.stderr,
                )
            break
    if bar is not None:
        bar.close()


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


def after_step(config, plan, parts, progress, window, buffer, window_metrics, sinks, step_values, pusher=None) -> None:
    """After optimizer step `progress.global_step`, in the HF trainer's order: sync the reference model, log,
    evaluate, save (and push the save to the Hub)."""
    step = progress.global_step
    final = step == parts.total_steps
    if config.sync_ref_model and parts.reference is not None and step % config.ref_model_sync_steps == 0:
        mix_into_reference(parts.policy, parts.reference, config.ref_model_mixup_alpha)
    if should_log(config, step, parts.total_steps, window):
        write_log(parts, progress, window, window_metrics, sinks, step_values)
    new_best = False
    if should_evaluate(config, step, parts.total_steps, window):
        metrics = evaluate(config, plan, parts, progress, window.epoch_progress)
        write_record(parts, sinks, {"step": step, "epoch": window.epoch_progress, **metrics})
        new_best = best.record_evaluation(config, progress, metrics)
    if should_save(config, step, parts.total_steps, window, final, new_best):
        save(config, plan, parts, progress, buffer, window_metrics, pusher, window.epoch_progress)


def save(
    config,
    plan,
    parts: Parts,
    progress: Progress,
    buffer,
    window_metrics: MetricWindow,
    pusher=None,
    epoch: float = 0.0,
) -> None:
    """checkpoint-STEP after optimizer step `progress.global_step`, then push it (push_to_hub) and apply
    save_total_limit."""
    progress.metric_window = window_metrics.state_dict()
    best.note_best_checkpoint(progress, parts.output_dir)
    pending = buffer if progress.micro_step % plan.generate_every_micro_steps else None
    save_checkpoint(
        parts.output_dir / f"checkpoint-{progress.global_step}",
        accelerator=parts.accelerator,
        model=parts.model,
        tokenizer=parts.tokenizer,
        optimizer=parts.optimizer,
        scheduler=parts.scheduler,
        progress=progress,
        buffer=pending,
        reference=parts.reference if config.sync_ref_model else None,
        save_only_model=config.save_only_model,
    )
    if parts.accelerator.is_main_process:
        if pusher is not None:
            pusher.after_save(parts.output_dir / f"checkpoint-{progress.global_step}", progress.global_step, epoch)
        if pusher is None or not pusher.busy():  # never delete a folder an upload is reading
            prune_checkpoints(parts.output_dir, config.save_total_limit, progress.best_model_checkpoint)


def load_best_model(config, parts: Parts, progress: Progress) -> None:
    """load_best_model_at_end: the best checkpoint's weights replace the last ones before the final save."""
    if not config.load_best_model_at_end or progress.best_model_checkpoint is None:
        return
    if parts.accelerator.is_main_process:
        print(
            f"grpo: loading the best model from {progress.best_model_checkpoint} ({best.metric_name(config)} "
            f"{progress.best_metric:g})",
            file=sys.stderr,
        )
    sharding.load_model_state(parts.accelerator, parts.model, Path(progress.best_model_checkpoint), load_weights)
    parts.accelerator.wait_for_everyone()


def logged_loss(config, progress: Progress, loss: float) -> float:
    """logging_nan_inf_filter: a NaN or infinite micro-step loss counts as the mean logged so far in this
    logging window, as the HF trainer does."""
    if config.logging_nan_inf_filter and not math.isfinite(loss):
        return progress.loss_since_log / (1 + progress.steps_since_log)
    return loss


class JitCheckpoint:
    """enable_jit_checkpoint: a SIGTERM (a pre-empted job) asks for a checkpoint; the loop saves after the current
    optimizer step and stops, so a resume loses nothing. The previous handler is restored afterwards."""

    def __init__(self, enabled: bool):
        self.enabled, self.signalled, self.previous = enabled, False, None

    def __enter__(self):
        if self.enabled:
            self.previous = signal.signal(signal.SIGTERM, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        self.signalled = True

    def requested(self, accelerator) -> bool:
        """Whether any process was signalled (all stop together)."""
        if not self.enabled:
            return False
        flag = torch.tensor(float(self.signalled), device=accelerator.device)
        return bool(accelerator.reduce(flag, reduction="sum").item() > 0)

    def __exit__(self, *exc) -> None:
        if self.enabled:
            signal.signal(signal.SIGTERM, self.previous)


def set_log_levels(config, accelerator) -> None:
    """log_level on the main process (of each machine with log_on_each_node), log_level_replica elsewhere, for
    transformers' and datasets' loggers; "passive" leaves them as they are."""
    import datasets
    import transformers

    main = accelerator.is_local_main_process if config.log_on_each_node else accelerator.is_main_process
    level = config.log_level if main else config.log_level_replica
    if level != "passive":
        number = transformers.utils.logging.log_levels[level]
        transformers.utils.logging.set_verbosity(number)
        datasets.utils.logging.set_verbosity(number)


def every(value: float, total: int) -> int:
    """logging_steps / save_steps: below 1 they are a fraction of the training steps, as in the HF trainer."""
    return max(math.ceil(total * value), 1) if value < 1 else int(value)


def ends_epoch(window) -> bool:
    return window.epoch_progress == window.epoch + 1


def should_log(config, step: int, total: int, window) -> bool:
    if config.logging_strategy == "epoch":
        return ends_epoch(window)
    return (config.logging_strategy == "steps" and step % every(config.logging_steps, total) == 0) or (
        step == 1 and config.logging_first_step
    )


def should_evaluate(config, step: int, total: int, window) -> bool:
    """eval_steps (default: logging_steps) and the last step; eval_delay postpones the first evaluation."""
    if config.eval_strategy == "epoch":
        return ends_epoch(window) and config.eval_delay <= window.epoch_progress
    if config.eval_strategy != "steps" or config.eval_delay > step:
        return False
    interval = every(config.eval_steps if config.eval_steps is not None else config.logging_steps, total)
    return step % interval == 0 or step == total


def should_save(config, step: int, total: int, window, final: bool, new_best: bool = False) -> bool:
    """save_strategy: every save_steps and the last step, each epoch's end, or (best) each new best evaluation."""
    if config.save_strategy == "best":
        return new_best
    if config.save_strategy == "epoch":
        return ends_epoch(window)
    return config.save_strategy == "steps" and (step % every(config.save_steps, total) == 0 or final)


def write_log(parts: Parts, progress: Progress, window, window_metrics: MetricWindow, sinks, step_values) -> None:
    loss = parts.accelerator.reduce(torch.tensor(progress.loss_since_log, device=parts.device), reduction="mean")
    record = {
        "step": progress.global_step,
        "epoch": window.epoch_progress,
        "loss": loss.item() / max(progress.steps_since_log, 1),
        **step_values,
        **window_metrics.summary(),
    }
    progress.loss_since_log, progress.steps_since_log = 0.0, 0
    write_record(parts, sinks, record)


def write_record(parts: Parts, sinks, record: dict) -> None:
    """One line of metrics.jsonl (and the other sinks); non-finite values become null."""
    record = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in record.items()}
    for sink in sinks:
        sink.write(record)


def progress_bar(config, parts: Parts, start: int):
    if not parts.accelerator.is_main_process or config.disable_tqdm:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=parts.total_steps, initial=start, desc="grpo", unit="step", dynamic_ncols=True)


def start_fresh_logs(parts: Parts) -> None:
    parts.accelerator.wait_for_everyone()
    if parts.accelerator.is_main_process:
        (parts.output_dir / "metrics.jsonl").unlink(missing_ok=True)
        (parts.output_dir / completions.COMPLETIONS_FILE).unlink(missing_ok=True)
        (parts.output_dir / completions.SAMPLE_FILE).unlink(missing_ok=True)
    (parts.output_dir / "prompt_assignment" / f"rank-{parts.rank}.jsonl").unlink(missing_ok=True)
    parts.accelerator.wait_for_everyone()


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


def write_resolved_config(config, directory) -> None:
    """The config this run used, as a file `grpo validate` and editors accept: every value that differs from TRL
    1.16's default (the others are the defaults), so reading it back gives the same config."""
    import yaml

    from grpo_schema.api.modeline import with_modeline
    from grpo_schema.engine.compiled import compiled

    facts = compiled("config").fields
    values = {name: value for name, value in config.model_dump(mode="json").items() if value != facts[name]["default"]}
    header = "# The config of this run: values that differ from TRL 1.16's defaults (grpo-config).\n"
    text = with_modeline(header + yaml.safe_dump(values, sort_keys=False))
    (directory / "grpo_config.yaml").write_text(text, encoding="utf-8")


if __name__ == "__main__":  # the recipe is not itself a command: launch/ starts it (and sits above it)
    sys.exit(
        "grpo_runtime.train is the training recipe; run a config with `python -m grpo_runtime FILE` or "
        "`grpo train FILE`"
    )

"""The GRPO training recipe: set up, loop over optimizer steps, save.

    grpo_runtime.train.main(config, plan)

is what `python -m grpo_runtime FILE` runs in every process under `grpo launch` (and `grpo train` in-process). The loop follows TRL 1.16's
schedule: a generation batch is produced on micro-steps 0 (mod steps_per_generation * num_iterations), shuffled once,
split into steps_per_generation micro-batches and replayed num_iterations times; gradients accumulate over
gradient_accumulation_steps micro-steps per optimizer step.
"""

from __future__ import annotations

import sys
import time

import grpo_runtime.distributed.sharding as sharding
from grpo_runtime.evaluate import evaluate
from grpo_runtime.outputs.checkpoint import Progress
from grpo_runtime.outputs.health import LiveHealth
from grpo_runtime.outputs.hub import HubPusher
from grpo_runtime.outputs.metrics import MetricWindow, loss_metrics
from grpo_runtime.recipe.cadence import after_step
from grpo_runtime.recipe.generation import generation_or_divergence
from grpo_runtime.recipe.logs import logged_loss, progress_bar, write_record
from grpo_runtime.recipe.saving import JitCheckpoint, save, save_final_model
from grpo_runtime.recipe.start import open_outputs, resume_or_start, set_log_levels
from grpo_runtime.setup import build_parts
from grpo_runtime.training.parts import Parts
from grpo_runtime.training.sampler import optimizer_windows
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
    progress, buffer, resume = resume_or_start(config, parts)
    start_step = progress.global_step
    health = LiveHealth(config, parts.accelerator.is_main_process)
    sinks = open_outputs(config, parts, resume, start_step, health)
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
    save_final_model(config, parts, progress)
    # Every process leaves the group together. Without this, the processes that do not write the final model
    # destroyed the group and exited right after the last gather, while its tensors could still be held by
    # torch's communication threads; on a busy machine one such process was aborted ("terminate called
    # without an active exception") as it exited, and the launcher stopped the run.
    parts.accelerator.wait_for_everyone()
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


if __name__ == "__main__":  # the recipe is not itself a command: launch/ starts it (and sits above it)
    sys.exit(
        "grpo_runtime.train is the training recipe; run a config with `python -m grpo_runtime FILE` or "
        "`grpo train FILE`"
    )

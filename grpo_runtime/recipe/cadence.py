"""When the loop logs, evaluates and saves (logging_strategy, eval_strategy, save_strategy and their steps, as the
HF trainer reads them), and what it does after each optimizer step."""

from __future__ import annotations

import math

import grpo_runtime.outputs.best as best
from grpo_runtime.evaluate import evaluate
from grpo_runtime.model.loading import mix_into_reference
from grpo_runtime.recipe.logs import write_log, write_record
from grpo_runtime.recipe.saving import save


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

"""What the loop logs: the loss of a logging window (logging_nan_inf_filter), one record to every sink, the
progress bar."""

from __future__ import annotations

import math

import torch

from grpo_runtime.outputs.checkpoint import Progress
from grpo_runtime.outputs.metrics import MetricWindow
from grpo_runtime.training.parts import Parts


def logged_loss(config, progress: Progress, loss: float) -> float:
    """logging_nan_inf_filter: a NaN or infinite micro-step loss counts as the mean logged so far in this
    logging window, as the HF trainer does."""
    if config.logging_nan_inf_filter and not math.isfinite(loss):
        return progress.loss_since_log / (1 + progress.steps_since_log)
    return loss


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

"""Checkpoints during the run (and their pushes and pruning), the save-and-stop of a pre-empted job
(enable_jit_checkpoint), and at the end the best model and the final save."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import torch

import grpo_runtime.distributed.sharding as sharding
import grpo_runtime.outputs.best as best
from grpo_runtime.outputs.checkpoint import Progress, load_weights, prune_checkpoints, save_checkpoint
from grpo_runtime.outputs.metrics import MetricWindow
from grpo_runtime.training.parts import Parts


def save_final_model(config, parts: Parts, progress: Progress) -> None:
    """After the loop: the best model if asked for (load_best_model_at_end), saved with the tokenizer; only the
    best checkpoint kept within save_total_limit."""
    parts.accelerator.wait_for_everyone()
    load_best_model(config, parts, progress)
    sharding.save_model(parts.accelerator, parts.model, parts.output_dir)
    if parts.accelerator.is_main_process:
        parts.tokenizer.save_pretrained(parts.output_dir)
        best.keep_only_best(parts.output_dir, config.save_total_limit, progress.best_model_checkpoint)


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

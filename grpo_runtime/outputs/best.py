"""The best checkpoint, kept as the HF trainer keeps it: metric_for_best_model, greater_is_better,
save_strategy: best, load_best_model_at_end, and the protection of the best checkpoint from save_total_limit.

After each evaluation the metric is compared with the best so far (strictly better, so a NaN never wins); the
step of a new best becomes the best checkpoint once a checkpoint of that step exists. With save_strategy: best,
a checkpoint is written exactly when an evaluation sets a new best. Pruning keeps the newest checkpoint (to
resume from) and the best one; at the end of training load_best_model_at_end puts the best weights back into
the model before the final save, and a save_total_limit of 1 then keeps the best checkpoint alone.
"""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

from grpo_runtime.common import CannotRun
from grpo_runtime.outputs.checkpoint import Progress, checkpoint_dirs


class MetricNotFound(CannotRun):
    """metric_for_best_model names no metric the evaluation produced (known at the first evaluation)."""


def metric_name(config) -> str | None:
    """metric_for_best_model, "loss" when load_best_model_at_end asks for a best model without naming one."""
    if config.metric_for_best_model is not None:
        return config.metric_for_best_model
    return "loss" if config.load_best_model_at_end or config.save_strategy == "best" else None


def greater_is_better(config, name: str) -> bool:
    """greater_is_better, or (unset) true for every metric but the ones whose name ends in 'loss'."""
    return config.greater_is_better if config.greater_is_better is not None else not name.endswith("loss")


def record_evaluation(config, progress: Progress, metrics: dict) -> bool:
    """Compare an evaluation's metric with the best so far; True (and progress updated) for a new best."""
    name = metric_name(config)
    if name is None:
        return False
    key = name if name.startswith("eval_") else f"eval_{name}"
    if key not in metrics:
        raise MetricNotFound(
            f"metric_for_best_model is {name!r}, but the evaluation has no {key!r}; its metrics are "
            f"{', '.join(sorted(metrics))}. Set metric_for_best_model to one of them"
        )
    value = metrics[key]
    greater = greater_is_better(config, name)
    best = progress.best_metric if progress.best_metric is not None else (-math.inf if greater else math.inf)
    if value is None or not (value > best if greater else value < best):
        return False
    progress.best_metric = float(value)
    progress.best_global_step = progress.global_step
    return True


def note_best_checkpoint(progress: Progress, output_dir: Path) -> None:
    """Before checkpoint-STEP is written: the best step's checkpoint, if it is this one or already exists, becomes
    the best checkpoint (recorded in the state file of the checkpoint being written)."""
    if not progress.best_global_step:
        return
    candidate = output_dir / f"checkpoint-{progress.best_global_step}"
    if progress.best_global_step == progress.global_step or candidate.is_dir():
        progress.best_model_checkpoint = str(candidate)


def forget_missing_best(progress: Progress) -> None:
    """A resumed run whose best checkpoint was deleted since: warn and track the best afresh from there."""
    if progress.best_model_checkpoint is not None and not Path(progress.best_model_checkpoint).is_dir():
        print(
            f"grpo: the best checkpoint {progress.best_model_checkpoint} recorded by the resumed checkpoint no "
            "longer exists; the best model is tracked from the resumed step on",
            file=sys.stderr,
        )
        progress.best_model_checkpoint = None


def keep_only_best(output_dir: Path, keep: int | None, best: str | None) -> None:
    """At the end of training, a save_total_limit of 1 keeps the best checkpoint only."""
    if keep == 1 and best is not None and Path(best).is_dir():
        for path in checkpoint_dirs(output_dir):
            if path.resolve() != Path(best).resolve():
                shutil.rmtree(path, ignore_errors=True)

"""Where metrics can be reported besides metrics.jsonl (torch-free: the field table reads this before anything
loads; outputs/metrics.py opens the sinks)."""

from __future__ import annotations

import importlib.util

REPORTERS = {"tensorboard": "tensorboard", "wandb": "wandb"}  # report_to name -> module that must be importable


def reporters(report_to) -> list[str]:
    """report_to as a list of names ("none" and unset: none)."""
    names = [report_to] if isinstance(report_to, str) else list(report_to or [])
    return [] if "none" in names else names


def requested_reporters(report_to) -> list[str]:
    """Normalise `report_to` (None, "none", "all", a name or a list) to the names this runtime writes to.

    A name grpo_runtime does not write (mlflow, trackio, ...) or whose package is not installed is skipped: the
    field table (grpo_runtime.support.fields) warns about it before the run starts, and metrics.jsonl has every metric.
    Misspelled names never get here: the validator refuses them."""
    names = [report_to] if isinstance(report_to, str) else list(report_to or [])
    if "none" in names or not names:
        return []
    wanted = REPORTERS if "all" in names else [n for n in names if n in REPORTERS]
    return [n for n in wanted if importlib.util.find_spec(REPORTERS[n]) is not None]

"""Metric names, their reduction over processes and logging steps, and where they are written.

Names follow TRL 1.16 (grpo-runtime.md §8) so dashboards built for `trl grpo` keep working. Values collected
between two logging steps are averaged ignoring NaN; a metric with only NaN values is logged as null.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Callable

import torch


def identity(tensor: torch.Tensor) -> torch.Tensor:
    return tensor


def nanmin(values: torch.Tensor) -> float:
    finite = values[~torch.isnan(values)]
    return finite.min().item() if finite.numel() else float("nan")


def nanmax(values: torch.Tensor) -> float:
    finite = values[~torch.isnan(values)]
    return finite.max().item() if finite.numel() else float("nan")


def loss_metrics(outputs, reduce_sum: Callable = identity, gather: Callable = identity) -> dict[str, float]:
    """Reduce one micro-step's loss statistics over processes in a single all-reduce.

    `outputs.sums` holds local [sum, count] pairs (global masked means); `outputs.per_sequence` holds per-sequence
    fractions whose min (`*_min`) or max (`*_max`) over all processes is logged."""
    metrics = {}
    names = list(outputs.sums)
    if names:
        totals = reduce_sum(torch.stack([outputs.sums[name] for name in names]))  # [M, 2]
        for name, (total, count) in zip(names, totals.tolist()):
            metrics[name] = total / max(count, 1.0)
    for name, values in outputs.per_sequence.items():
        gathered = gather(values)
        metrics[name] = nanmin(gathered) if name.endswith("_min") else nanmax(gathered)
    if outputs.entropy_window is not None:  # with an entropy bonus, the policy term is logged on its own
        metrics["policy_loss"] = gather(outputs.policy_loss.reshape(1)).nanmean().item()
    if outputs.router_loss is not None:  # MoE load-balancing loss
        metrics["aux_loss"] = gather(outputs.router_loss.reshape(1)).mean().item()
    return metrics


class MetricWindow:
    """Values collected since the last logging step."""

    def __init__(self):
        self._values: dict[str, list[float]] = defaultdict(list)
        self._latest: dict[str, float] = {}

    def add(self, metrics: dict[str, float]) -> None:
        for name, value in metrics.items():
            self._values[name].append(float(value))

    def set(self, name: str, value: float) -> None:
        """A running total (e.g. num_tokens): logged as its latest value since the last log, not averaged."""
        self._latest[name] = float(value)

    def summary(self) -> dict[str, float | None]:
        """NaN-ignoring mean of each metric (None when every value was NaN), then start a new window."""
        result: dict[str, float | None] = {}
        for name, values in self._values.items():
            finite = [v for v in values if not math.isnan(v)]
            result[name] = sum(finite) / len(finite) if finite else None
        result.update(self._latest)
        self._values.clear()
        self._latest.clear()  # like the averaged ones, logged only on steps that produced it (as TRL)
        return result

    def state_dict(self) -> dict:
        return {"values": dict(self._values), "latest": dict(self._latest)}

    def load_state_dict(self, state: dict) -> None:
        self._values = defaultdict(list, {k: list(v) for k, v in state["values"].items()})
        self._latest = dict(state["latest"])


class JsonlSink:
    """metrics.jsonl: one JSON object per logging step (interface.md §6)."""

    def __init__(self, path: Path):
        self.path = path

    def write(self, record: dict) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, allow_nan=False, default=_json_number) + "\n")

    def close(self) -> None:
        pass


def _json_number(value):
    if isinstance(value, torch.Tensor):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to metrics.jsonl")


class TensorBoardSink:
    def __init__(self, log_dir: Path):
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=str(log_dir))

    def write(self, record: dict) -> None:
        step = record["step"]
        for name, value in record.items():
            if name != "step" and isinstance(value, (int, float)):
                self.writer.add_scalar(f"train/{name}", value, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class WandbSink:
    def __init__(self, config: dict, run_name: str | None, project: str):
        import wandb

        self.run = wandb.run or wandb.init(project=project, name=run_name, config=config)

    def write(self, record: dict) -> None:
        values = {f"train/{k}": v for k, v in record.items() if k != "step" and v is not None}
        self.run.log(values, step=record["step"])

    def close(self) -> None:
        self.run.finish()


def open_sinks(output_dir: Path, reporters: list[str], config_dict: dict, run_name, project) -> list:
    sinks: list = [JsonlSink(output_dir / "metrics.jsonl")]
    if "tensorboard" in reporters:
        sinks.append(TensorBoardSink(output_dir / "runs"))
    if "wandb" in reporters:
        sinks.append(WandbSink(config_dict, run_name, project))
    return sinks

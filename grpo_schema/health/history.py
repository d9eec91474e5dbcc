"""What the run-health rules read: a run's metric records and completion rows, as plain data.

Every source (grpo_runtime's metrics.jsonl and completions files, TRL's trainer_state.json log_history and its
completions parquet files, a live run's logs handed over by the callback) becomes one RunHistory with TRL 1.16's
metric names. Older TRL releases named some metrics differently; `normalise` maps them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

# Older names -> TRL 1.16's (releases 0.14-0.16 logged these).
ALIASES = {
    "completion_length": "completions/mean_length",
    "clip_ratio": "clip_ratio/region_mean",
    "train_loss": None,  # the HF trainer's end-of-run summary, not a step's loss
}
# Keys of the HF trainer's end-of-training summary record: such a record is not a training step.
SUMMARY_KEYS = {"train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "train_loss"}


def number(value: Any) -> float | None:
    """A metric value as a float; NaN for null (our metrics.jsonl writes NaN as null) and for NaN itself."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None  # a string or a list: not a number this engine reads


def normalise(record: dict[str, Any]) -> dict[str, float]:
    """One logged record with TRL 1.16's names and float values (NaN for null); `train/` prefixes (wandb
    exports) are dropped, and `rewards/NAME` of releases before 0.17 becomes `rewards/NAME/mean`."""
    out: dict[str, float] = {}
    for name, value in record.items():
        name = name.removeprefix("train/")
        if name in ALIASES:
            if ALIASES[name] is None:
                continue
            name = ALIASES[name]
        elif name.startswith("rewards/") and name.count("/") == 1:
            name += "/mean"
        converted = number(value)
        if converted is not None:
            out[name] = converted
    return out


def is_training_record(record: dict[str, Any]) -> bool:
    """A step's training log: not an evaluation (`eval_*`) and not the end-of-run summary."""
    keys = set(record) - {"step", "epoch"}
    if not keys or keys & SUMMARY_KEYS:
        return False
    return not all(key.startswith("eval_") for key in keys)


@dataclass
class MetricPoint:
    step: int
    values: dict[str, float]
    line: int | None = None  # 1-based line of the record in its file (metrics.jsonl), when it has one


@dataclass
class RewardStats:
    """One reward function's scores as seen in completion rows (or counted by the callback's wrapper)."""

    scores: int = 0
    none: int = 0
    nan: int = 0
    calls: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    first_step: int | None = None
    last_step: int | None = None

    def add(self, step: int, value: Any) -> None:
        self.scores += 1
        if value is None:
            self.none += 1
        elif isinstance(value, float) and math.isnan(value):
            self.nan += 1
        else:
            return
        self.first_step = step if self.first_step is None else min(self.first_step, step)
        self.last_step = step if self.last_step is None else max(self.last_step, step)


@dataclass
class StepCompletions:
    """Completion rows of one step, summarised."""

    rows: int = 0
    groups: int = 0
    flat_groups: int = 0  # every reward of the group equal
    identical_groups: int = 0  # every completion text of the group equal
    truncated: int = 0
    truncation_known: int = 0
    cut_rewards: list[float] = field(default_factory=list)  # total rewards of the rows that were cut


@dataclass
class RunHistory:
    points: list[MetricPoint] = field(default_factory=list)
    completions: dict[int, StepCompletions] = field(default_factory=dict)
    rewards: dict[str, RewardStats] = field(default_factory=dict)
    # facts about the run rather than its metrics: {"kind": "resume", "from_step": .., "total_steps": .., ...}
    events: list[dict[str, Any]] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)  # the run's config values, when known
    completions_sampled: bool = False  # completion rows are a sample (grpo_runtime without log_completions)
    reward_counts_from_calls: bool = False  # rewards counted at the call (callback wrapper): rows add none
    none_includes_nan: bool = False  # TRL's completion tables hold NaN for None: the two cannot be told apart
    raw_names: set[str] = field(default_factory=set)  # metric names as logged, before normalise: the TRL era

    def series(self, name: str) -> list[tuple[int, float, int | None]]:
        return [(p.step, p.values[name], p.line) for p in self.points if name in p.values]

    def metric_names(self) -> set[str]:
        return {name for point in self.points for name in point.values}

    def last_step(self) -> int:
        steps = [p.step for p in self.points] + list(self.completions)
        return max(steps) if steps else 0


def add_completion_rows(history: RunHistory, rows: Iterable[dict[str, Any]]) -> None:
    """Completion rows ({"step", "prompt", "completion", "rewards": {NAME: value}, "reward", "truncated"}) of
    grpo_runtime, or TRL's parquet rows turned into that shape. A group is a run of consecutive rows with the
    same prompt (both trainers write a generation's groups contiguously)."""
    group: list[dict[str, Any]] = []
    for row in rows:
        if group and (row.get("prompt") != group[0].get("prompt") or row.get("step") != group[0].get("step")):
            _add_group(history, group)
            group = []
        group.append(row)
    if group:
        _add_group(history, group)


def _add_group(history: RunHistory, group: list[dict[str, Any]]) -> None:
    step = int(group[0].get("step") or 0)
    stats = history.completions.setdefault(step, StepCompletions())
    stats.rows += len(group)
    stats.groups += 1
    totals = [row.get("reward") for row in group]
    finite = [t for t in totals if isinstance(t, (int, float)) and not math.isnan(t)]
    if len(group) > 1 and len(finite) == len(group) and max(finite) - min(finite) <= 1e-9 * max(1.0, abs(max(finite))):
        stats.flat_groups += 1
    texts = [str(row.get("completion")) for row in group]
    if len(group) > 1 and len(set(texts)) == 1:
        stats.identical_groups += 1
    for row in group:
        if isinstance(row.get("truncated"), bool):
            stats.truncation_known += 1
            stats.truncated += row["truncated"]
            reward = row.get("reward")
            if row["truncated"] and isinstance(reward, (int, float)) and math.isfinite(reward):
                stats.cut_rewards.append(float(reward))
        if not history.reward_counts_from_calls:
            for name, value in (row.get("rewards") or {}).items():
                history.rewards.setdefault(name, RewardStats()).add(step, value)

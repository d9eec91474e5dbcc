"""HealthMonitor: the run-health engine fed as a run goes (the runtime's loop, the TRL callback, `grpo health
--follow`) or all at once (a finished run's directory). It keeps the run's history and runs every rule over it
on demand; for live surfaces `changes` gives each finding once, when it first appears, and each one given that
no longer holds (`new_findings`: the first half)."""

from __future__ import annotations

from typing import Any, Iterable

from grpo_schema.health.findings import HealthFinding
from grpo_schema.health.history import (
    MetricPoint,
    RewardStats,
    RunHistory,
    add_completion_rows,
    is_training_record,
    normalise,
)
from grpo_schema.health.rules import run_health_rules
from grpo_schema.health.settings import HealthSettings


class HealthMonitor:
    def __init__(self, settings: HealthSettings | None = None, config: dict[str, Any] | None = None):
        self.settings = settings or HealthSettings()
        self.history = RunHistory(config=dict(config or {}))
        self._shown: dict[tuple[str, str], HealthFinding] = {}  # given by new_findings and still holding

    def observe_metrics(self, record: dict[str, Any], line: int | None = None, step: int | None = None) -> bool:
        """One logged record (metrics.jsonl line, an entry of TRL's log_history, the logs of on_log). Returns
        whether it was a training step's record (evaluations and end-of-run summaries are not)."""
        if not isinstance(record, dict) or not is_training_record(record):
            return False
        at = step if step is not None else record.get("step")
        if not isinstance(at, (int, float)) or isinstance(at, bool):
            return False
        self.history.points.append(MetricPoint(int(at), normalise(record), line))
        self.history.raw_names.update(str(name).removeprefix("train/") for name in record)
        return True

    def observe_completions(self, rows: Iterable[dict[str, Any]], sampled: bool = False) -> None:
        self.history.completions_sampled = self.history.completions_sampled or sampled
        add_completion_rows(self.history, rows)

    def observe_reward_call(self, name: str, step: int, seconds: float, values: Iterable[Any]) -> None:
        """One call of a reward function, counted where it was made (the TRL callback's wrapper)."""
        self.history.reward_counts_from_calls = True
        stats = self.history.rewards.setdefault(name, RewardStats())
        stats.calls += 1
        stats.seconds += seconds
        stats.slowest = max(stats.slowest, seconds)
        for value in values:
            stats.add(step, value)

    def observe_event(self, kind: str, **data: Any) -> None:
        """A fact about the run rather than a metric: kind "resume" with from_step, total_steps, checkpoint,
        ignore_data_skip, and (once the run ended) trained_steps."""
        for event in self.history.events:
            if event.get("kind") == kind == "resume" and event.get("from_step") == data.get("from_step"):
                event.update(data)  # the same resume, now with what it trained
                return
        self.history.events.append({"kind": kind, **data})

    def findings(self) -> list[HealthFinding]:
        return run_health_rules(self.history, self.settings)

    def new_findings(self) -> list[HealthFinding]:
        """Findings not given before (by code and subject), each once while it holds."""
        return self.changes()[0]

    def changes(self) -> tuple[list[HealthFinding], list[HealthFinding]]:
        """(findings that appeared since the last call, findings given before that no longer hold on the run so
        far: a reward whose std was 0 on its first steps and then varied). A live surface shows both, so that
        what it showed last is what `grpo health` says of the finished run."""
        current = self.findings()
        keys = {f.key for f in current}
        fresh = [f for f in current if f.key not in self._shown]
        cleared = [self._shown.pop(key) for key in list(self._shown) if key not in keys]
        self._shown.update((f.key, f) for f in fresh)
        return fresh, cleared

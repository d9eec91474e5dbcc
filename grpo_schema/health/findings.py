"""A run-health finding: a diagnostic (the same shape as a config's) plus the metric, the steps and the numbers
it saw. Plain data; `to_dict` is what every surface shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grpo_schema.engine.diagnostics import Diagnostic


@dataclass(frozen=True)
class HealthFinding:
    diagnostic: Diagnostic
    metric: str | None = None  # the metric (or reward function's metric) it is about
    steps: tuple[int, int] | None = None  # first and last optimizer step it saw
    values: tuple[Any, ...] = ()  # the numbers behind it, at most MAX_VALUES
    subject: str = ""  # what the finding is about beyond its code (a reward function's name): identity
    fatal: bool = False  # the run cannot learn on: a live surface may stop it
    extra: dict[str, Any] = field(default_factory=dict)
    # how much of the run it covers: {"logged_steps": where it held, "of": logged steps of its metric,
    # "stretches": [[first, last], ...], "first": step, "worst": step, "worst_value": number}
    extent: dict[str, Any] | None = None

    @property
    def code(self) -> str:
        return self.diagnostic.code

    @property
    def severity(self) -> str:
        return self.diagnostic.severity

    @property
    def key(self) -> tuple[str, str]:
        return (self.code, self.subject)

    def to_dict(self) -> dict[str, Any]:
        out = self.diagnostic.to_dict()
        out.update(
            metric=self.metric,
            steps=list(self.steps) if self.steps else None,
            values=list(self.values),
            fatal=self.fatal,
            extent=self.extent,
        )
        out.update(self.extra)
        return out


MAX_VALUES = 20


def shown(values: list[Any]) -> tuple[Any, ...]:
    """At most MAX_VALUES numbers, rounded for reading; a longer run keeps its first and last ones."""
    rounded = [round(v, 6) if isinstance(v, float) else v for v in values]
    if len(rounded) <= MAX_VALUES:
        return tuple(rounded)
    half = MAX_VALUES // 2
    return tuple(rounded[:half] + rounded[-half:])

"""The run-health rules' registry and the helpers they share: `@health_rule` declares a rule's code (its title
is the first line of the rule's docstring, the rest its explanation: `grpo codes GRPO-A001`) and registers it;
`finding` builds a HealthFinding; `sustained` finds a stretch of logged steps that show a problem."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterator

from grpo_schema.engine.codes import declare
from grpo_schema.engine.diagnostics import Diagnostic, Fix, Severity
from grpo_schema.health.findings import HealthFinding, shown
from grpo_schema.health.history import RunHistory
from grpo_schema.health.settings import HealthSettings

HealthRuleFn = Callable[[RunHistory, HealthSettings], Iterator[HealthFinding]]


@dataclass(frozen=True)
class HealthRule:
    code: str
    severity: Severity
    fn: HealthRuleFn


HEALTH_RULES: list[HealthRule] = []


def health_rule(code: str, severity: Severity) -> Callable[[HealthRuleFn], HealthRuleFn]:
    def register(fn: HealthRuleFn) -> HealthRuleFn:
        doc = (fn.__doc__ or fn.__name__).strip().splitlines()
        declare(code, severity, doc[0].rstrip("."), " ".join(line.strip() for line in doc[1:]) or doc[0])
        HEALTH_RULES.append(HealthRule(code, severity, fn))
        return fn

    return register


def finding(code: str, severity: Severity, message: str, hint: str, *, metric: str | None = None,
            steps: tuple[int, int] | None = None, values: list | tuple = (), fields: tuple[str, ...] = (),
            fix: Fix | None = None, alternatives: tuple[Fix, ...] = (), subject: str = "", fatal: bool = False,
            line: int | None = None) -> HealthFinding:
    diagnostic = Diagnostic(code, severity, message, fields=fields, line=line, column=1 if line else None,
                            hint=hint, fix=fix, alternatives=alternatives)
    return HealthFinding(diagnostic, metric=metric, steps=steps, values=shown(list(values)), subject=subject,
                         fatal=fatal)


def sustained(history: RunHistory, name: str, bad: Callable[[float], bool], min_steps: int):
    """The first stretch of at least `min_steps` consecutive logged values of `name` that are all `bad`
    (NaN values are skipped, not counted), grown while it lasts: (first step, last step, values, first line),
    or None."""
    stretch: list[tuple[int, float, int | None]] = []
    best = None
    for step, value, line in history.series(name):
        if math.isnan(value):
            continue
        if bad(value):
            stretch.append((step, value, line))
            continue
        if len(stretch) >= min_steps:
            best = stretch
            break
        stretch = []
    if best is None and len(stretch) >= min_steps:
        best = stretch
    if best is None:
        return None
    return best[0][0], best[-1][0], [v for _, v, _ in best], best[0][2]


def steps_text(first: int, last: int) -> str:
    return f"step {first}" if first == last else f"steps {first}-{last}"


def share_range(values: list[float]) -> str:
    low, high = percent(min(values)), percent(max(values))
    return low if low == high else f"{low}-{high}"


def percent(share: float) -> str:
    return f"{100 * share:.0f}%" if share >= 0.01 or share == 0 else f"{100 * share:.2g}%"


def reward_rising(history: RunHistory, last: int, settings: HealthSettings) -> bool:
    """Whether the mean reward clearly rose from the start of the run to step `last`: the last third of its logged
    values above the first third by more than reward_gain of the logged reward std (or of the reward's scale)."""
    rewards = [v for s, v, _ in history.series("reward") if s <= last and not math.isnan(v)]
    if len(rewards) < 3:
        return False
    third = max(len(rewards) // 3, 1)
    gain = sum(rewards[-third:]) / third - sum(rewards[:third]) / third
    stds = [v for s, v, _ in history.series("reward_std") if s <= last and not math.isnan(v)]
    scale = sum(stds) / len(stds) if stds else max(abs(r) for r in rewards)
    return gain > settings.reward_gain * max(scale, 1e-6)


def config_value(history: RunHistory, name: str, default):
    value = history.config.get(name)
    return default if value is None else value

"""The run-health rules' registry and the helpers they share: `@health_rule` declares a rule's code (its title
is the first line of the rule's docstring, the rest its explanation: `grpo codes GRPO-A001`) and registers it;
`finding` builds a HealthFinding; `sustained` finds a stretch of logged steps that show a problem."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator

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
    # what it judges from: metric names (`rewards/*/std` for any reward function), "rows" (completion rows),
    # "truncation" (completion rows that say whether they were cut), "calls" (reward calls the callback counted);
    # a run with none of them cannot show what the rule looks for, and the report says so. Empty: always judged.
    reads: tuple[str, ...] = ()


HEALTH_RULES: list[HealthRule] = []


def health_rule(code: str, severity: Severity, reads: tuple[str, ...] = ()) -> Callable[[HealthRuleFn], HealthRuleFn]:
    def register(fn: HealthRuleFn) -> HealthRuleFn:
        doc = (fn.__doc__ or fn.__name__).strip().splitlines()
        declare(code, severity, doc[0].rstrip("."), " ".join(line.strip() for line in doc[1:]) or doc[0])
        HEALTH_RULES.append(HealthRule(code, severity, fn, reads))
        return fn

    return register


Point = tuple[int, float, "int | None"]  # (step, value, line of the record)


@dataclass(frozen=True)
class Extent:
    """Where a condition held over one metric's logged values: every logged step, the stretches of consecutive
    logged steps, out of how many were logged, and the worst step."""

    held: tuple[Point, ...]
    of: int
    stretches: tuple[tuple[int, int], ...]
    worst: tuple[int, float]
    counts: tuple[int, ...] = ()  # logged steps in each stretch

    def first_lasting(self, min_steps: int) -> int:
        """The first step of the first stretch of at least `min_steps` logged steps."""
        return next(s[0] for s, n in zip(self.stretches, self.counts) if n >= min_steps)

    @property
    def first(self) -> int:
        return self.held[0][0]

    @property
    def last(self) -> int:
        return self.held[-1][0]

    @property
    def values(self) -> list[float]:
        return [v for _, v, _ in self.held]

    @property
    def line(self) -> int | None:
        return self.held[0][2]

    def to_dict(self) -> dict[str, Any]:
        return {
            "logged_steps": len(self.held),
            "of": self.of,
            "stretches": [list(s) for s in self.stretches],
            "first": self.first,
            "worst": self.worst[0],
            "worst_value": round(self.worst[1], 6) if math.isfinite(self.worst[1]) else None,
        }

    def text(self) -> str:
        """`on 84 of 160 logged steps (steps 3-8, 20-60, 90-126)`"""
        shown_stretches = [steps_text(a, b).removeprefix("steps ").removeprefix("step ") for a, b in self.stretches]
        more = len(shown_stretches) - 6
        listed = ", ".join(shown_stretches[:6]) + (f" and {more} more" if more > 0 else "")
        word = "step" if len(self.held) == 1 and len(self.stretches) == 1 and self.first == self.last else "steps"
        return f"on {len(self.held)} of {self.of} logged step{'s' if self.of != 1 else ''} ({word} {listed})"


def extent_of(
    points: list[Point], bad: Callable[[float], bool], min_steps: int, badness: Callable[[float], float] = lambda v: v
) -> Extent | None:
    """The extent of `bad` over logged points, or None when no stretch of it lasts `min_steps` logged steps (one
    bad logging window is noise); when one does, every step where it held counts, short stretches too."""
    held: list[Point] = []
    stretches: list[list[Point]] = []
    previous_bad = False
    for point in points:
        if bad(point[1]):
            if not previous_bad:
                stretches.append([])
            stretches[-1].append(point)
            held.append(point)
        previous_bad = bad(point[1])
    if not any(len(stretch) >= min_steps for stretch in stretches):
        return None
    worst = max(held, key=lambda p: badness(p[1]))
    return Extent(
        tuple(held),
        len(points),
        tuple((s[0][0], s[-1][0]) for s in stretches),
        (worst[0], worst[1]),
        tuple(len(s) for s in stretches),
    )


def scan(
    history: RunHistory,
    name: str,
    bad: Callable[[float], bool],
    min_steps: int,
    badness: Callable[[float], float] = lambda v: v,
) -> Extent | None:
    """extent_of over the logged values of metric `name` (NaN values are left out: not logged)."""
    points = [(s, v, line) for s, v, line in history.series(name) if not math.isnan(v)]
    return extent_of(points, bad, min_steps, badness)


def finding(
    code: str,
    severity: Severity,
    message: str,
    hint: str,
    *,
    metric: str | None = None,
    steps: tuple[int, int] | None = None,
    values: list | tuple = (),
    fields: tuple[str, ...] = (),
    fix: Fix | None = None,
    alternatives: tuple[Fix, ...] = (),
    subject: str = "",
    fatal: bool = False,
    line: int | None = None,
    extent: Extent | None = None,
) -> HealthFinding:
    """A HealthFinding; with `extent`, its steps (first and last where it held), values and line come from it."""
    if extent is not None:
        steps = steps or (extent.first, extent.last)
        values = values or extent.values
        line = line if line is not None else extent.line
    diagnostic = Diagnostic(
        code,
        severity,
        message,
        fields=fields,
        line=line,
        column=1 if line else None,
        hint=hint,
        fix=fix,
        alternatives=alternatives,
    )
    return HealthFinding(
        diagnostic,
        metric=metric,
        steps=steps,
        values=shown(list(values)),
        subject=subject,
        fatal=fatal,
        extent=extent.to_dict() if extent is not None else None,
    )


def steps_text(first: int, last: int) -> str:
    return f"step {first}" if first == last else f"steps {first}-{last}"


def share_range(values: list[float]) -> str:
    low, high = percent(min(values)), percent(max(values))
    return low if low == high else f"{low}-{high}"


def percent(share: float) -> str:
    return f"{100 * share:.0f}%" if share >= 0.01 or share == 0 else f"{100 * share:.2g}%"


def reward_names(history: RunHistory) -> list[str]:
    names = set(history.rewards)
    for metric in history.metric_names():
        parts = metric.split("/")
        if len(parts) >= 3 and parts[0] == "rewards":
            names.add("/".join(parts[1:-1]))
    return sorted(names)


def config_value(history: RunHistory, name: str, default):
    value = history.config.get(name)
    return default if value is None else value


def logging_interval(history: RunHistory) -> int:
    """Optimizer steps per logged record: logging_steps from the config or the state, else the usual spacing of
    the logged steps. Above 1, a metric the trainer takes from one step (grad_norm) is a sample of the window,
    while the others (loss, rewards, entropy) are the window's means."""
    steps = sorted({p.step for p in history.points})
    gaps = sorted(b - a for a, b in zip(steps, steps[1:]) if b > a)
    if gaps:
        return max(gaps[len(gaps) // 2], 1)
    value = history.config.get("logging_steps")
    return int(value) if isinstance(value, (int, float)) and value >= 1 else 1

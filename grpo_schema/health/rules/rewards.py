"""Rules over rewards: groups whose rewards are all equal, and reward functions that return None or NaN, are
slow, or give every completion one score."""

from __future__ import annotations

import math
from typing import Callable

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.health.history import RunHistory
from grpo_schema.health.rules.base import (
    extent_of,
    finding,
    health_rule,
    percent,
    reward_names,
    scan,
    share_range,
    steps_text,
)
from grpo_schema.health.settings import HealthSettings


@health_rule("GRPO-A001", "warning", reads=("frac_reward_zero_std", "rows"))
def zero_variance_groups(history: RunHistory, settings: HealthSettings):
    """prompt groups with no learning signal.

    GRPO learns from the differences between the rewards of one prompt's completions. When every completion of
    a group gets the same reward, the group's advantages are all 0 and it contributes nothing; when that is true
    of (nearly) every group for several steps, the run learns nothing (frac_reward_zero_std near 1, loss and
    grad_norm near 0). Usual causes: too few completions per prompt, sampling that is not diverse, prompts that
    are all too easy or all too hard for the model, or a reward that cannot tell completions apart."""
    metric = "frac_reward_zero_std"
    found = scan(history, metric, lambda v: v >= settings.zero_std_fraction, settings.min_steps)
    if found is None:
        metric = "completions (groups with equal rewards)"
        found = extent_of(flat_group_shares(history), lambda v: v >= settings.zero_std_fraction, settings.min_steps)
        if found is None:
            return
    fixes = []
    generations = history.config.get("num_generations")
    if isinstance(generations, int) and generations > 0:
        fixes.append(
            Fix(
                set={"num_generations": generations * 2},
                safe=False,
                title=f"num_generations {generations} -> {generations * 2}: more completions per prompt",
            )
        )
    temperature = history.config.get("temperature")
    if isinstance(temperature, (int, float)) and temperature < 1.5:
        higher = round(min(temperature + 0.3, 1.5), 2)
        fixes.append(
            Fix(
                set={"temperature": higher},
                safe=False,
                title=f"temperature {temperature:g} -> {higher:g}: more diverse completions",
            )
        )
    yield finding(
        "GRPO-A001",
        "warning",
        f"{share_range(found.values)} of prompt groups gave every completion the same reward "
        f"{found.text()}: their advantages are 0 and they teach the model nothing",
        "give each prompt more completions (num_generations), sample more diversely (temperature), "
        "filter out prompts the model always or never solves (DAPO-style dynamic sampling: TRL has no "
        "option for it, so filter the data), or check that the reward can tell completions apart",
        metric=metric,
        fields=("num_generations", "temperature"),
        fix=fixes[0] if fixes else None,
        alternatives=tuple(fixes[1:]),
        extent=found,
    )


def flat_group_shares(history: RunHistory) -> list:
    """(step, share of groups whose rewards are all equal, None) per step of completion rows."""
    return [
        (step, stats.flat_groups / stats.groups, None)
        for step, stats in sorted(history.completions.items())
        if stats.groups
    ]


def _reward_share(history: RunHistory, name: str, kind: str) -> tuple[float, int, tuple[int, int] | None, str]:
    """(share, scores counted, steps, where it was counted) of None or NaN scores of one reward function."""
    metric = f"rewards/{name}/{kind}_frac"
    series = [(s, v) for s, v, _ in history.series(metric) if not math.isnan(v)]
    if series:
        bad = [s for s, v in series if v > 0]
        share = sum(v for _, v in series) / len(series)
        return share, len(series), (min(bad), max(bad)) if bad else None, metric
    stats = history.rewards.get(name)
    if stats is None or not stats.scores:
        return 0.0, 0, None, ""
    count = stats.none if kind == "none" else stats.nan
    steps = (stats.first_step, stats.last_step) if count and stats.first_step is not None else None
    return count / stats.scores, stats.scores, steps, "completions"


def _bad_scores(
    history: RunHistory,
    kind: str,
    threshold: float,
    code: str,
    what: Callable[[str, str], str],
    hint: Callable[[str], str],
):
    """One finding per reward function whose share of `kind` ("none" or "nan") scores is over the threshold;
    what(name, source) names the scores, hint(name) is the fix."""
    for name in reward_names(history):
        share, counted, steps, source = _reward_share(history, name, kind)
        if counted and share > threshold:
            yield finding(
                code,
                "warning",
                f"reward function {name} returned {what(name, source)} for {percent(share)} of completions"
                + (f" (at {steps_text(*steps)})" if steps else ""),
                hint(name),
                metric=f"rewards/{name}/{kind}_frac",
                steps=steps,
                values=[share],
                fields=("reward_funcs",),
                subject=name,
            )


@health_rule("GRPO-A002", "warning", reads=("rewards/*/none_frac", "rows", "calls"))
def reward_returns_none(history: RunHistory, settings: HealthSettings):
    """a reward function returns None for many completions.

    TRL treats None as "this function does not apply to this row" and leaves it out of the sum, so a row whose
    every function returned None gets NaN and no advantage. A function meant for every row that returns None
    often (a parse that fails, an answer column missing) silently drops its signal."""
    # TRL's completion tables write a None score as NaN: there the two cannot be told apart
    yield from _bad_scores(
        history,
        "none",
        settings.reward_none_rate,
        "GRPO-A002",
        lambda name, source: "None or NaN" if history.none_includes_nan and source == "completions" else "None",
        lambda name: (
            f"make {name} return a number for every completion it can judge (0.0 for a wrong answer); "
            "None is for rows a function does not apply to"
        ),
    )


@health_rule("GRPO-A003", "warning", reads=("rewards/*/nan_frac", "rows", "calls"))
def reward_returns_nan(history: RunHistory, settings: HealthSettings):
    """a reward function returns NaN.

    A NaN reward is never meaningful: TRL's nan-aware sums drop it like a None, so the row silently loses that
    function's signal, and a reward NaN in every function makes the row's advantage NaN. It usually comes from a
    division by zero or a float('nan') default in the reward function."""
    yield from _bad_scores(
        history,
        "nan",
        settings.reward_nan_rate,
        "GRPO-A003",
        lambda name, source: "NaN",
        lambda name: (
            f"find where {name} computes NaN (a 0/0, a float('nan') default) and return a number, "
            "or None for a row it does not apply to"
        ),
    )


@health_rule("GRPO-A004", "warning", reads=("rewards/*/seconds", "calls"))
def slow_reward(history: RunHistory, settings: HealthSettings):
    """a reward function is slow.

    Reward functions run between generation and training on the main path of every step; one that calls a
    sandbox, a judge model or a remote service can dominate the step time or hang the run. The finding gives
    the slowest call seen."""
    for name in reward_names(history):
        metric = f"rewards/{name}/seconds"
        values = [(s, v) for s, v, _ in history.series(metric) if not math.isnan(v)]
        stats = history.rewards.get(name)
        slowest = max([v for _, v in values] + [stats.slowest if stats else 0.0])
        if slowest <= settings.reward_seconds:
            continue
        slow_steps = [s for s, v in values if v > settings.reward_seconds]
        steps = (min(slow_steps), max(slow_steps)) if slow_steps else None
        yield finding(
            "GRPO-A004",
            "warning",
            f"reward function {name} took {slowest:.1f} s for one generation batch "
            f"(threshold {settings.reward_seconds:g} s)",
            f"make {name} async (it then runs beside the other functions), batch its remote calls, "
            "or give it a timeout that returns None",
            metric=metric,
            steps=steps,
            values=[v for _, v in values] or [slowest],
            fields=("reward_funcs",),
            subject=name,
        )


@health_rule("GRPO-A009", "warning", reads=("rewards/*/std", "rewards/*/mean"))
def constant_reward(history: RunHistory, settings: HealthSettings):
    """a reward function gives every completion the same score.

    Its std is 0 on every logged step: it cannot tell completions apart, so it adds nothing to the advantages
    (and, alone, makes every group flat: GRPO-A001). A function that is constant by mistake: the wrong column,
    a format check the model never (or always) passes, a score rounded away. TRL before 0.17 logs only each
    function's mean: a mean that is the same number on every logged step is the same finding."""
    for name in reward_names(history):
        stds = [(s, v, line) for s, v, line in history.series(f"rewards/{name}/std") if not math.isnan(v)]
        means = [(s, v, line) for s, v, line in history.series(f"rewards/{name}/mean") if not math.isnan(v)]
        severity = "warning"
        if stds:
            found = extent_of(stds, lambda v: v <= 1e-12, settings.min_steps)
            if found is None:
                continue
            how = "its std is 0"
            if len(found.held) < len(stds):  # it varied: it can tell completions apart, and the model learned it
                if len(found.held) * 2 <= len(stds):
                    continue
                severity, how = "info", "its std is 0 since the model learned it: it no longer adds to the advantages"
        else:
            first = round(means[0][1], 9) if means else None
            found = extent_of(means, lambda v, first=first: round(v, 9) == first, settings.min_steps)
            if found is None or len(found.held) < len(means):
                continue
            how = "no std is logged: judged from its mean, the same number at every logged step"
        constant = len({round(v, 9) for _, v, _ in means}) == 1
        what = f"the same score ({means[0][1]:g})" if constant and means else "one score per step"
        yield finding(
            "GRPO-A009",
            severity,
            f"reward function {name} gave every completion {what} {found.text()} ({how})",
            f"check what {name} reads (the dataset column, the completion's format) and that it can "
            "score two completions differently; a function that never varies only shifts every reward",
            metric=f"rewards/{name}/{'std' if stds else 'mean'}",
            values=[v for _, v, _ in means] or found.values,
            fields=("reward_funcs",),
            subject=name,
            extent=found,
        )

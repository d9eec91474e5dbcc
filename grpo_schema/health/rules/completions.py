"""Rules over what the policy generates: completions cut at max_completion_length, identical within a group,
or empty."""

from __future__ import annotations

import math
import statistics

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.health.history import RunHistory
from grpo_schema.health.rules.base import (
    config_value,
    extent_of,
    finding,
    health_rule,
    percent,
    reward_names,
    scan,
    share_range,
)
from grpo_schema.health.settings import HealthSettings


@health_rule("GRPO-A006", "warning", reads=("completions/clipped_ratio", "truncation"))
def clipped_completions(history: RunHistory, settings: HealthSettings):
    """completions are cut at max_completion_length, and the reward does not improve.

    A truncated completion has no end: its answer is usually missing, so the reward judges half a thought, and
    with length-normalised losses the model learns that long is fine. When (nearly) every completion hits the
    limit and the reward of the cut completions stays where it was, the limit is too small for the task or the
    model has stopped emitting its end-of-sequence token. A run whose cut completions earn more and more (a task
    where the budget is the canvas) is left alone, unless the cut lasts most of the run: then it is information.
    A reward function that saturates (a format check every completion passes) is no sign of learning."""
    cap = completion_cap(history)
    points = cut_shares(history)
    found = extent_of(points, lambda v: v >= settings.clipped_fraction, settings.min_steps)
    if found is None:
        return
    severity, why = "warning", ""
    rise = cut_reward_rise(history, found.last, settings)
    if rise:
        if len(found.held) * 2 <= found.of:
            return
        severity, why = "info", f"; left as information: {rise}"
    cap_text = f" ({cap[0]}{'' if cap[1] == 'config' else ', the longest completion logged'})" if cap else ""
    lengths = [
        v
        for s, v, _ in history.series("completions/mean_length")
        if not math.isnan(v) and found.first <= s <= found.last
    ]
    length_text = f", mean length {number_range(lengths)} tokens" if lengths else ""
    shares = found.values
    fixes = clipped_fixes(history, cap, shares, lengths)
    yield finding(
        "GRPO-A006",
        severity,
        f"{share_range(shares)} of completions were cut at max_completion_length{cap_text} "
        f"{found.text()}{length_text}{why}",
        "raise max_completion_length to what the task needs, or set mask_truncated_completions so cut "
        "completions do not train the model; if completions never end, check the EOS token and chat "
        "template" + ("" if cap else "; the cap the run used is not in its log: pass --config"),
        metric="completions/clipped_ratio",
        values=shares,
        fields=("max_completion_length", "mask_truncated_completions"),
        fix=fixes[0] if fixes else None,
        alternatives=tuple(fixes[1:]),
        extent=found,
    )


def completion_cap(history: RunHistory) -> tuple[int, str] | None:
    """The max_completion_length the run ran with: from its config, else the longest completion it logged
    (TRL logs completions/max_length; when completions are cut, the longest is the cap)."""
    value = history.config.get("max_completion_length")
    if isinstance(value, int) and value > 0:
        return value, "config"
    longest = [v for _, v, _ in history.series("completions/max_length") if not math.isnan(v)]
    return (int(max(longest)), "log") if longest and max(longest) >= 1 else None


def cut_shares(history: RunHistory) -> list:
    """(step, share, line) of completions cut per logged step: completions/clipped_ratio, or the share from
    completion rows that say whether they were cut."""
    points = [
        (step, share, line)
        for step, share, line in history.series("completions/clipped_ratio")
        if not math.isnan(share)
    ]
    if points:
        return points
    return [
        (step, stats.truncated / stats.truncation_known, None)
        for step, stats in sorted(history.completions.items())
        if stats.truncation_known
    ]


def cut_reward_rise(history: RunHistory, last: int, settings: HealthSettings) -> str:
    """How the reward of the cut completions rose up to step `last` ("" when it did not): from completion rows
    that say which were cut, else from the reward functions that do not saturate, else from the total."""
    cut = [
        stats.cut_rewards for step, stats in sorted(history.completions.items()) if step <= last and stats.cut_rewards
    ]
    if cut:
        means = [sum(rewards) / len(rewards) for rewards in cut]
        stds = [statistics.pstdev(rewards) for rewards in cut if len(rewards) > 1]
        return "the reward of the cut completions rose" if rose(means, stds, settings) else ""
    names = [name for name in reward_names(history) if history.series(f"rewards/{name}/mean")]
    if names:
        risen = [
            name
            for name in names
            if not saturated(history, name, last) and rose(*function_series(history, name, last), settings)
        ]
        return f"{', '.join(risen)} rose" if risen else ""
    total = [v for s, v, _ in history.series("reward") if s <= last and not math.isnan(v)]
    stds = [v for s, v, _ in history.series("reward_std") if s <= last and not math.isnan(v)]
    return "the reward rose" if rose(total, stds, settings) else ""


def function_series(history: RunHistory, name: str, last: int) -> tuple[list[float], list[float]]:
    means = [v for s, v, _ in history.series(f"rewards/{name}/mean") if s <= last and not math.isnan(v)]
    stds = [v for s, v, _ in history.series(f"rewards/{name}/std") if s <= last and not math.isnan(v)]
    return means, stds


def saturated(history: RunHistory, name: str, last: int) -> bool:
    """A function that ends up giving every completion one score (its std 0, or its mean fixed, over the last
    third of its logged steps): its rise is the model learning a check, not the cut completions improving."""
    means, stds = function_series(history, name, last)
    tail = max(len(means) // 3, 1)
    if stds:
        return all(v <= 1e-12 for v in stds[-tail:])
    return len({round(v, 9) for v in means[-tail:]}) == 1 and len(means) > tail


def rose(values: list[float], stds: list[float] | None, settings: HealthSettings) -> bool:
    """The last third of `values` above the first third by more than reward_gain of the mean std (or of the
    values' scale)."""
    if len(values) < 3:
        return False
    third = max(len(values) // 3, 1)
    gain = sum(values[-third:]) / third - sum(values[:third]) / third
    scale = sum(stds) / len(stds) if stds else max(abs(v) for v in values)
    return gain > settings.reward_gain * max(scale, 1e-6)


def clipped_fixes(
    history: RunHistory, cap: tuple[int, str] | None, shares: list[float], lengths: list[float]
) -> list[Fix]:
    """A longer cap sized from the one the run used and how many it cut (twice the cap when nearly all were cut,
    half as much again when fewer were), and masking cut completions when the run does not already."""
    fixes = []
    if cap:
        share = sorted(shares)[len(shares) // 2]
        longer = cap[0] * 2 if share >= 0.9 else math.ceil(cap[0] * 1.5)
        if longer >= 64:
            longer = math.ceil(longer / 64) * 64
        seen = f", mean length {number_range(lengths)}" if lengths else ""
        fixes.append(
            Fix(
                set={"max_completion_length": longer},
                safe=False,
                title=f"max_completion_length {cap[0]} -> {longer}: {share_range(shares)} of completions "
                f"were cut at {cap[0]}{seen}",
            )
        )
    if history.config.get("mask_truncated_completions") is not True:
        fixes.append(
            Fix(
                set={"mask_truncated_completions": True},
                safe=False,
                title="leave truncated completions out of the loss",
            )
        )
    return fixes


def number_range(values: list[float]) -> str:
    low, high = f"{min(values):.4g}", f"{max(values):.4g}"
    return low if low == high else f"{low}-{high}"


@health_rule("GRPO-A016", "warning", reads=("rows",))
def identical_completions(history: RunHistory, settings: HealthSettings):
    """every completion of a prompt is the same text.

    A group of identical completions has identical rewards, so no signal: sampling has become deterministic
    (temperature near 0, top_k 1) or the policy has collapsed onto one answer."""
    shares = [
        (step, stats.identical_groups / stats.groups, None)
        for step, stats in sorted(history.completions.items())
        if stats.groups
    ]
    found = extent_of(shares, lambda v: v >= settings.identical_fraction, settings.min_steps)
    if found is None:
        return
    temperature = history.config.get("temperature")
    fix = None
    if isinstance(temperature, (int, float)) and temperature < 1.5:
        higher = round(min(temperature + 0.3, 1.5), 2)
        fix = Fix(set={"temperature": higher}, safe=False, title=f"temperature {temperature:g} -> {higher:g}")
    yield finding(
        "GRPO-A016",
        "warning",
        f"in {percent(min(found.values))} or more of prompt groups every completion was the same text {found.text()}",
        "sample more diversely (temperature, top_p, top_k) or lower the learning rate if the policy collapsed",
        metric="completions (identical texts)",
        fields=("temperature",),
        fix=fix,
        extent=found,
    )


@health_rule("GRPO-A017", "warning", reads=("completions/mean_length",))
def empty_completions(history: RunHistory, settings: HealthSettings):
    """completions are empty.

    The mean completion is at most one token: the model ends at once (an end-of-sequence token it learned to
    emit first, or a stop string that matches the start), so nothing is generated to reward."""
    found = scan(
        history,
        "completions/mean_length",
        lambda v: v <= settings.empty_length,
        settings.min_steps,
        badness=lambda v: -v,
    )
    if found is None or config_value(history, "max_completion_length", 256) <= settings.empty_length:
        return  # a limit of one token makes every completion short: GRPO-A006 says that
    yield finding(
        "GRPO-A017",
        "warning",
        f"completions have {max(found.values):g} tokens or fewer on average {found.text()}",
        "check the chat template and the stop tokens, and whether a reward favours short answers",
        metric="completions/mean_length",
        extent=found,
    )

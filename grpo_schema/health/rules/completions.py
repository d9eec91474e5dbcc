"""Rules over what the policy generates: completions cut at max_completion_length, identical within a group,
or empty."""

from __future__ import annotations

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.health.history import RunHistory
from grpo_schema.health.rules.base import (
    config_value, finding, health_rule, percent, reward_rising, share_range, steps_text, sustained,
)
from grpo_schema.health.settings import HealthSettings


@health_rule("GRPO-A006", "warning")
def clipped_completions(history: RunHistory, settings: HealthSettings):
    """completions are cut at max_completion_length, and the reward does not improve.

    A truncated completion has no end: its answer is usually missing, so the reward judges half a thought, and
    with length-normalised losses the model learns that long is fine. When (nearly) every completion hits the
    limit and the reward stays where it was, the limit is too small for the task or the model has stopped
    emitting its end-of-sequence token. A run whose reward rises while its completions are cut (a task where
    the budget is the canvas) is left alone."""
    found = sustained(history, "completions/clipped_ratio", lambda v: v >= settings.clipped_fraction,
                      settings.min_steps)
    if found is None or reward_rising(history, found[1], settings):
        return
    first, last, values, line = found
    length = int(config_value(history, "max_completion_length", 256))
    fixes = (Fix(set={"max_completion_length": length * 2}, safe=False,
                  title=f"max_completion_length {length} -> {length * 2}"),
             Fix(set={"mask_truncated_completions": True}, safe=False,
                 title="leave truncated completions out of the loss"))
    yield finding("GRPO-A006", "warning",
                  f"{share_range(values)} of completions were cut at max_completion_length"
                  + (f" ({history.config['max_completion_length']})" if "max_completion_length" in history.config else "")
                  + f" at {steps_text(first, last)}",
                  "raise max_completion_length to what the task needs, or set mask_truncated_completions so cut "
                  "completions do not train the model; if completions never end, check the EOS token and chat "
                  "template",
                  metric="completions/clipped_ratio", steps=(first, last), values=values,
                  fields=("max_completion_length", "mask_truncated_completions"), fix=fixes[0],
                  alternatives=fixes[1:], line=line)


@health_rule("GRPO-A016", "warning")
def identical_completions(history: RunHistory, settings: HealthSettings):
    """every completion of a prompt is the same text.

    A group of identical completions has identical rewards, so no signal: sampling has become deterministic
    (temperature near 0, top_k 1) or the policy has collapsed onto one answer."""
    stretch: list[tuple[int, float]] = []
    for step in sorted(history.completions):
        stats = history.completions[step]
        if stats.groups:
            share = stats.identical_groups / stats.groups
            if share >= settings.identical_fraction:
                stretch.append((step, share))
                continue
            if len(stretch) >= settings.min_steps:
                break
            stretch = []
    if len(stretch) < settings.min_steps:
        return
    temperature = float(config_value(history, "temperature", 1.0))
    yield finding("GRPO-A016", "warning",
                  f"in {percent(min(s for _, s in stretch))} or more of prompt groups every completion was the "
                  f"same text at {steps_text(stretch[0][0], stretch[-1][0])}",
                  "sample more diversely (temperature, top_p, top_k) or lower the learning rate if the policy "
                  "collapsed",
                  metric="completions (identical texts)", steps=(stretch[0][0], stretch[-1][0]),
                  values=[s for _, s in stretch], fields=("temperature",),
                  fix=Fix(set={"temperature": round(min(temperature + 0.3, 1.5), 2)}, safe=False,
                          title="a higher temperature"))


@health_rule("GRPO-A017", "warning")
def empty_completions(history: RunHistory, settings: HealthSettings):
    """completions are empty.

    The mean completion is at most one token: the model ends at once (an end-of-sequence token it learned to
    emit first, or a stop string that matches the start), so nothing is generated to reward."""
    found = sustained(history, "completions/mean_length", lambda v: v <= settings.empty_length, settings.min_steps)
    if found is None or config_value(history, "max_completion_length", 256) <= settings.empty_length:
        return  # a limit of one token makes every completion short: GRPO-A006 says that
    first, last, values, line = found
    yield finding("GRPO-A017", "warning",
                  f"completions have {max(values):g} tokens or fewer on average at {steps_text(first, last)}",
                  "check the chat template and the stop tokens, and whether a reward favours short answers",
                  metric="completions/mean_length", steps=(first, last), values=values, line=line)

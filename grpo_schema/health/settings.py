"""The thresholds of the run-health rules, as named settings with documented defaults (docs/health.md).

Defaults are set so that a healthy run gives no finding: a rule over a metric needs `min_steps` consecutive
logged steps that show the problem (one bad logging window is noise), except the fatal ones (a NaN loss is never
noise). Every setting can be changed from `grpo health --set NAME=VALUE`, the callback's and the monitor's
`settings=`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class HealthSettings:
    # consecutive logged steps a metric rule needs before it reports (the fatal rules report at once)
    min_steps: int = 3
    # A001: share of prompt groups whose rewards are all equal (no learning signal), frac_reward_zero_std
    zero_std_fraction: float = 0.9
    # A002: share of a reward function's scores that are None before it is reported
    reward_none_rate: float = 0.1
    # A003: share of a reward function's scores that are NaN (a NaN is never intended: any share above this)
    reward_nan_rate: float = 0.0
    # A004: seconds one call of one reward function may take (per generation batch) before it is called slow
    reward_seconds: float = 30.0
    # A006: share of completions cut at max_completion_length
    clipped_fraction: float = 0.9
    # A006: a rise of the mean reward, in reward stds, that counts as learning (cut completions then pass)
    reward_gain: float = 0.25
    # A008: mean token entropy (nats) below which the policy is called collapsed
    entropy_floor: float = 0.02
    # A009: mean per-token KL to the reference above which KL is called runaway
    kl_ceiling: float = 1.0
    # A010: share of tokens whose ratio was clipped (clip_ratio/region_mean) above which updates are too large
    clip_fraction: float = 0.2
    # A011: |importance-sampling ratio mean - 1| above which trainer and generator disagree
    is_ratio_drift: float = 0.1
    # A011: mean |log-prob(trainer) - log-prob(generator)| per token above which they disagree
    logp_difference: float = 0.5
    # A016: share of prompt groups whose completions are all the same text
    identical_fraction: float = 0.9
    # A017: mean completion length (tokens) at or below which completions are called empty
    empty_length: float = 1.0

    def with_values(self, values: dict[str, str | float | int]) -> "HealthSettings":
        """Settings with NAME=VALUE overrides (strings from the command line are converted to the field's type)."""
        known = {f.name: f for f in fields(self)}
        changes = {}
        for name, value in values.items():
            if name not in known:
                raise ValueError(f"unknown health setting {name!r}; known: {', '.join(sorted(known))}")
            kind = int if known[name].type in ("int", int) else float
            try:
                changes[name] = kind(value)
            except (TypeError, ValueError):
                raise ValueError(f"health setting {name}={value!r}: not a number") from None
        return replace(self, **changes)

    def to_dict(self) -> dict[str, float | int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

"""What a run's log lets the rules judge: the TRL era its metric names come from, the rules that cannot fire on it
(none of what they read was logged), the run's artefacts of logging, and whether it is a GRPO run at all.

TRL logged different metrics in different releases (the names below are from each release's GRPOTrainer): before
0.17 `rewards/NAME` (a mean, no std), `completion_length` and, from 0.16, `clip_ratio`; from 0.17
`rewards/NAME/mean` and `/std`, `completions/*` (clipped_ratio among them) and `clip_ratio/*`; from 0.18
`frac_reward_zero_std`; from 0.20 `entropy`; from 0.23 `sampling/*` (vLLM with importance-sampling correction).
1.x logs what 0.29 did. docs/health.md has the table of which rule can fire on which era.
"""

from __future__ import annotations

from grpo_schema.health.history import RunHistory
from grpo_schema.health.rules import HEALTH_RULES
from grpo_schema.health.rules.optimisation import zero_gradient_points
from grpo_schema.health.settings import HealthSettings

# What logs each thing a rule reads, for the report's "not judged" note.
WHERE = {
    "frac_reward_zero_std": "frac_reward_zero_std (TRL 0.18+)",
    "entropy": "entropy (TRL 0.20+)",
    "completions/clipped_ratio": "completions/clipped_ratio (TRL 0.17+)",
    "completions/mean_length": "completions/mean_length or completion_length",
    "rewards/*/std": "rewards/NAME/std (TRL 0.17+)",
    "rewards/*/mean": "rewards/NAME/mean or rewards/NAME",
    "rewards/*/none_frac": "rewards/NAME/none_frac (grpo_runtime)",
    "rewards/*/nan_frac": "rewards/NAME/nan_frac (grpo_runtime)",
    "rewards/*/seconds": "rewards/NAME/seconds (grpo_runtime)",
    "clip_ratio/region_mean": "clip_ratio/region_mean or clip_ratio (TRL 0.16+)",
    "kl": "kl (beta other than 0)",
    "sampling/importance_sampling_ratio/mean": "sampling/* (TRL 0.23+, vLLM with importance-sampling correction)",
    "sampling/sampling_logp_difference/mean": "",
    "rows": "completion tables (log_completions)",
    "truncation": "grpo_runtime's completion rows",
    "calls": "the TRL callback's watch()",
}
GRPO_PREFIXES = ("reward", "frac_reward_zero_std", "completions/", "completion_length", "kl", "clip_ratio", "sampling/")


def era(history: RunHistory) -> str:
    """The TRL releases whose metric names the log uses ("" when it has none of the telling names)."""
    names = history.raw_names
    if not is_grpo(history):
        return ""
    if "completion_length" in names or any(n.startswith("rewards/") and n.count("/") == 1 for n in names):
        return "TRL before 0.17"
    for metric, since in (
        ("sampling/importance_sampling_ratio/mean", "0.23"),
        ("entropy", "0.20"),
        ("frac_reward_zero_std", "0.18"),
    ):
        if metric in names:
            return f"TRL {since} or later"
    if any(n.startswith("completions/") or (n.startswith("rewards/") and n.endswith("/mean")) for n in names):
        return "TRL 0.17 or later"
    return ""


def present(history: RunHistory, what: str) -> bool:
    if what == "rows":
        return bool(history.completions)
    if what == "truncation":
        return any(stats.truncation_known for stats in history.completions.values())
    if what == "calls":
        return history.reward_counts_from_calls
    names = history.metric_names()
    if "*" in what:
        head, tail = what.split("*")
        return any(n.startswith(head) and n.endswith(tail) and len(n) > len(head) + len(tail) for n in names)
    return what in names


def not_judged(history: RunHistory) -> list[dict]:
    """The rules that cannot fire on this log: none of what they read was logged."""
    from grpo_schema.engine.codes import CODES

    out = []
    for rule in HEALTH_RULES:
        if rule.reads and not any(present(history, what) for what in rule.reads):
            out.append({"code": rule.code, "title": CODES[rule.code].title, "needs": list(rule.reads)})
    return out


def not_judged_note(items: list[dict], run_era: str) -> str:
    if not items:
        return ""
    parts = []
    for item in items:
        needs = [WHERE.get(what, what) for what in item["needs"] if WHERE.get(what, what)]
        parts.append(f"{item['code']} ({item['title']}: needs {' or '.join(needs)})")
    logged = f" ({run_era} metric names)" if run_era else ""
    return f"not judged, as this run{logged} logged nothing they read: " + "; ".join(parts)


def artefact_notes(history: RunHistory, settings: HealthSettings) -> list[str]:
    """Values that look like a finding but are an artefact of how the trainer logs."""
    _, set_aside = zero_gradient_points(history, settings)
    if not set_aside:
        return []
    from grpo_schema.health.rules.base import logging_interval

    steps = ", ".join(str(s) for s, _, _ in set_aside[:8]) + (" ..." if len(set_aside) > 8 else "")
    return [
        f"grad_norm read 0 at {len(set_aside)} logged step{'s' if len(set_aside) != 1 else ''} ({steps}), but "
        f"with logging_steps {logging_interval(history)} it is one step's value of each window while the "
        "window's means (loss, rewards, entropy) show a learning signal: not taken as no gradient (GRPO-A007)"
    ]


def is_grpo(history: RunHistory) -> bool:
    return bool(history.completions or history.rewards) or any(
        name.startswith(GRPO_PREFIXES) for name in history.metric_names()
    )


def logged_steps(history: RunHistory) -> int:
    return len({p.step for p in history.points})

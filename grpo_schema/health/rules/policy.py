"""Rules over how far the policy moves: entropy collapse, runaway KL, ratio clipping, and a generator that
samples from other weights than the trainer holds."""

from __future__ import annotations

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.health.history import RunHistory
from grpo_schema.health.rules.base import config_value, finding, health_rule, percent, scan
from grpo_schema.health.settings import HealthSettings


@health_rule("GRPO-A008", "warning", reads=("entropy",))
def entropy_collapse(history: RunHistory, settings: HealthSettings):
    """the policy's entropy has collapsed.

    The mean token entropy is near 0: the model puts all its probability on one token at each position, so
    completions stop differing and groups go flat. Often the end of a run that was learning."""
    found = scan(history, "entropy", lambda v: v < settings.entropy_floor, settings.min_steps, badness=lambda v: -v)
    if found is None:
        return
    yield finding(
        "GRPO-A008",
        "warning",
        f"entropy is below {settings.entropy_floor:g} {found.text()}",
        "lower the learning rate, add an entropy bonus (entropy_coef) or a KL term (beta), or stop at "
        "the last checkpoint before the collapse",
        metric="entropy",
        fields=("learning_rate", "beta"),
        extent=found,
    )


@health_rule("GRPO-A010", "warning", reads=("kl",))
def kl_runaway(history: RunHistory, settings: HealthSettings):
    """the KL to the reference model runs away.

    The mean per-token KL is well above what a GRPO run stays within: the policy has moved far from the
    reference, usually with reward hacking or degenerate completions."""
    found = scan(history, "kl", lambda v: v > settings.kl_ceiling, settings.min_steps)
    if found is None:
        return
    values = found.values
    beta = float(config_value(history, "beta", 0.0) or 0.0)
    yield finding(
        "GRPO-A010",
        "warning",
        f"kl is above {settings.kl_ceiling:g} {found.text()} (up to {max(values):.3g})",
        "raise beta, lower the learning rate, and look at the completions of these steps for reward hacking",
        metric="kl",
        fields=("beta", "learning_rate"),
        fix=Fix(set={"beta": round(beta * 2, 6)}, safe=False, title="a stronger KL penalty") if beta > 0 else None,
        extent=found,
    )


@health_rule("GRPO-A011", "warning", reads=("clip_ratio/region_mean",))
def clip_ratio_high(history: RunHistory, settings: HealthSettings):
    """many tokens are clipped by the PPO ratio.

    A large share of tokens whose probability ratio left [1-epsilon, 1+epsilon] means the policy moves too far
    between generation and update: too high a learning rate, or too many passes over one generation
    (num_iterations, steps_per_generation)."""
    found = scan(history, "clip_ratio/region_mean", lambda v: v > settings.clip_fraction, settings.min_steps)
    if found is None:
        return
    values = found.values
    yield finding(
        "GRPO-A011",
        "warning",
        f"{percent(max(values))} of tokens were clipped {found.text()}",
        "lower learning_rate, or reuse each generation less (num_iterations, steps_per_generation)",
        metric="clip_ratio/region_mean",
        fields=("learning_rate", "num_iterations", "steps_per_generation"),
        extent=found,
    )


@health_rule(
    "GRPO-A013", "warning", reads=("sampling/importance_sampling_ratio/mean", "sampling/sampling_logp_difference/mean")
)
def sampler_drift(history: RunHistory, settings: HealthSettings):
    """the generator's log-probs drift from the trainer's.

    With vLLM generation, the importance-sampling ratio between the trainer's and vLLM's log-probs should stay
    near 1. A ratio that drifts, or a large log-prob difference, means the generator samples from other weights
    than the trainer holds: the weight sync is failing or lossy (LoRA merged into quantised weights, a server
    that did not receive an update), or the two compute in different precisions."""
    found = scan(
        history,
        "sampling/importance_sampling_ratio/mean",
        lambda v: abs(v - 1.0) > settings.is_ratio_drift,
        settings.min_steps,
        badness=lambda v: abs(v - 1.0),
    )
    metric = "sampling/importance_sampling_ratio/mean"
    if found is None:
        metric = "sampling/sampling_logp_difference/mean"
        found = scan(history, metric, lambda v: v > settings.logp_difference, settings.min_steps)
    if found is None:
        return
    values = found.values
    fix = None
    if history.config.get("vllm_importance_sampling_correction") is False:
        fix = Fix(
            set={"vllm_importance_sampling_correction": True},
            safe=False,
            title="correct for the drift while it is found",
        )
    yield finding(
        "GRPO-A013",
        "warning",
        f"{metric} is {min(values):.3g}-{max(values):.3g} {found.text()}: the generator "
        "does not sample from the trainer's weights",
        "check that weights reach vLLM after each step (server mode: the trainer must reach the server's "
        "weight-update port; LoRA on 4-bit weights needs the merged 16-bit weights), run vLLM in the "
        "trainer's dtype (vllm_model_impl, bf16), and keep vllm_importance_sampling_correction on",
        metric=metric,
        fields=("vllm_importance_sampling_correction", "vllm_mode"),
        fix=fix,
        extent=found,
    )

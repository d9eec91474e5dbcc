"""Rules over the optimiser's numbers: a non-finite loss or gradient, no gradient at all, a learning rate of 0."""

from __future__ import annotations

import math

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.health.history import RunHistory
from grpo_schema.health.rules.base import config_value, extent_of, finding, health_rule, logging_interval, scan
from grpo_schema.health.settings import HealthSettings


@health_rule("GRPO-A005", "error", reads=("loss", "grad_norm"))
def nan_loss(history: RunHistory, settings: HealthSettings):
    """the loss or the gradient norm is NaN or infinite.

    From here on the weights are NaN or about to be: the run cannot recover. Usual causes: a learning rate far
    too high, fp16 overflow, a NaN reaching the loss through the advantages or log-probs."""
    fix = _tenth_of_the_learning_rate(history)
    diverged = _diverged(history, fix)
    if diverged is not None:
        yield diverged
        return
    yield from _non_finite_findings(history, settings, fix)


def _tenth_of_the_learning_rate(history: RunHistory) -> Fix | None:
    lr = config_value(history, "learning_rate", None)
    return (
        Fix(set={"learning_rate": float(f"{lr / 10:.3g}")}, safe=False, title="a tenth of the learning rate")
        if isinstance(lr, (int, float)) and lr > 0
        else None
    )


def _diverged(history: RunHistory, fix: Fix | None):
    """The finding for a run whose generation hit NaN or infinite probabilities (the first such event); None when
    none did."""
    for event in history.events:
        if event.get("kind") == "diverged" and isinstance(event.get("step"), int):
            return finding(
                "GRPO-A005",
                "error",
                f"the model's next-token probabilities are NaN or infinite at step {event['step']}: the "
                "weights diverged and generation cannot go on",
                "lower learning_rate, keep max_grad_norm on (1.0), prefer bf16 to fp16; resume from the "
                "last checkpoint before it",
                metric="generation",
                steps=(event["step"], event["step"]),
                values=[str(event.get("error"))],
                fields=("learning_rate", "max_grad_norm"),
                fix=fix,
                fatal=True,
                subject="generation",
            )
    return None


def _non_finite_findings(history: RunHistory, settings: HealthSettings, fix: Fix | None):
    """The first of the loss and the grad norm that is NaN or infinite (a grad norm only when it lasts past what a
    loss scaler skips)."""
    loss = non_finite(history, "loss", 1)
    lasting = settings.min_steps if scaler_may_skip(history) else 1
    grad = non_finite(history, "grad_norm", lasting)
    for metric, found in (("loss", loss), ("grad_norm", grad)):
        if found is None:
            continue
        start = found.first if metric == "loss" else found.first_lasting(lasting)
        how = (
            ""
            if metric == "loss"
            else (
                f"; {settings.min_steps} or more logged steps in a row: not a loss scaler's skipped step"
                if scaler_may_skip(history)
                else "; the run is not fp16, so no loss scaler skipped the step"
            )
        )
        yield finding(
            "GRPO-A005",
            "error",
            f"{metric} is {_spell(found.held[0][1])} from step {start}, {found.text()}{how}",
            "lower learning_rate, keep max_grad_norm on (1.0), prefer bf16 to fp16; resume from the last "
            "checkpoint before the first NaN",
            metric=metric,
            values=[_spell(v) for v in found.values],
            fields=("learning_rate", "max_grad_norm"),
            fix=fix,
            fatal=True,
            subject=metric,
            steps=(start, found.last),
            extent=found,
        )
        return  # the grad norm follows the loss: one finding says it


def scaler_may_skip(history: RunHistory) -> bool:
    """Whether a loss scaler may have skipped a step whose gradient overflowed: an fp16 run, or one whose
    precision is not known (a trainer state read without its config). bf16 and fp32 runs have none: their
    optimizer applies a NaN gradient."""
    return history.config.get("fp16") is not False


def non_finite(history: RunHistory, metric: str, min_steps: int):
    """The extent of NaN or infinite values of `metric` (a NaN here is a value, not a missing log)."""
    return extent_of(history.series(metric), lambda v: not math.isfinite(v), min_steps, badness=lambda v: 0.0)


def _spell(value: float) -> str:
    return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")


@health_rule("GRPO-A018", "warning", reads=("grad_norm",))
def skipped_overflow(history: RunHistory, settings: HealthSettings):
    """the gradient overflowed on some steps and they were skipped.

    A NaN or infinite grad_norm on a step whose loss is finite, with finite grad norms again after it, is what a
    mixed-precision loss scaler does when fp16 overflows: it skips that optimizer step and halves its scale, and
    the weights never see the NaN. One such step is routine on fp16 (a T4 has no bf16); many mean the scale
    keeps overflowing. It becomes GRPO-A005 when the loss itself goes non-finite or the grad norm stays
    non-finite for min_steps logged steps, and in a run known not to be fp16 (no scaler: the NaN is applied)."""
    if any(not math.isfinite(v) for _, v, _ in history.series("loss")) or any(
        e.get("kind") == "diverged" for e in history.events
    ):
        return  # GRPO-A005 says it
    if not scaler_may_skip(history) or non_finite(history, "grad_norm", settings.min_steps) is not None:
        return  # GRPO-A005 says it
    found = non_finite(history, "grad_norm", 1)
    if found is None:
        return
    fp16 = history.config.get("fp16")
    why = (
        "the fp16 loss scaler skipped those optimizer steps"
        if fp16 is True
        else "as an fp16 loss scaler does when a step overflows, those optimizer steps were skipped"
    )
    yield finding(
        "GRPO-A018",
        "warning",
        f"grad_norm was {_spell(found.held[0][1])} {found.text()} while the loss stayed finite: {why}, "
        "and the weights did not take them",
        "nothing to do for a few skips; if they recur, lower learning_rate or warm it up longer, keep "
        "max_grad_norm on, and use bf16 instead of fp16 where the GPU has it (Ampere or newer)",
        metric="grad_norm",
        values=[_spell(v) for v in found.values],
        fields=("fp16", "learning_rate", "max_grad_norm"),
        subject="grad_norm",
        extent=found,
    )


@health_rule("GRPO-A012", "warning", reads=("learning_rate",))
def zero_learning_rate(history: RunHistory, settings: HealthSettings):
    """the learning rate is 0.

    Every logged step so far had learning_rate 0: the optimizer steps but nothing changes. Usually a warmup
    longer than the run (warmup_steps or warmup_ratio against max_steps), or learning_rate 0 itself."""
    found = scan(history, "learning_rate", lambda v: v == 0.0, settings.min_steps)
    if found is None:
        return
    from_start = found.first == history.series("learning_rate")[0][0] and found.counts[0] >= settings.min_steps
    if not from_start and len(found.held) * 2 <= found.of:
        return  # cosine and linear schedules end at 0: not a defect while it is the end of the run
    warmup = config_value(history, "warmup_steps", 0)
    why = "" if from_start else "; the schedule reached 0 early and those steps trained nothing (information)"
    yield finding(
        "GRPO-A012",
        "warning" if from_start else "info",
        f"learning_rate is 0 {found.text()}{why}",
        "shorten the warmup (warmup_steps, warmup_ratio) below the run's length, or set learning_rate"
        if from_start
        else "end the run where the schedule reaches 0 (max_steps), or use a schedule that "
        "does not decay to 0 before it ends",
        metric="learning_rate",
        fields=("warmup_steps", "warmup_ratio", "learning_rate"),
        fix=Fix(set={"warmup_steps": 0}, unset=("warmup_ratio",), safe=False, title="no warmup")
        if warmup and from_start
        else None,
        extent=found,
    )


@health_rule("GRPO-A007", "warning", reads=("grad_norm",))
def no_gradient(history: RunHistory, settings: HealthSettings):
    """the optimizer receives no gradient.

    grad_norm is 0 on several consecutive steps: no parameter moves. With GRPO this usually follows from
    advantages that are all 0 (GRPO-A001) and a KL term that is off (beta 0); it also happens when every
    completion token is masked (mask_truncated_completions with every completion truncated). With
    logging_steps above 1 the trainer logs one step's grad norm per window: a 0 there counts only where the
    window's own numbers agree (every group flat, or a reward std of 0)."""
    points, _ = zero_gradient_points(history, settings)
    found = extent_of(points, lambda v: v == 0.0, settings.min_steps)
    if found is None:
        return
    yield finding(
        "GRPO-A007",
        "warning",
        f"grad_norm is 0 {found.text()}: the model does not change",
        "see the other findings for the cause (groups with equal rewards, every completion masked); "
        "the run is spending its compute on nothing",
        metric="grad_norm",
        extent=found,
    )


def zero_gradient_points(history: RunHistory, settings: HealthSettings) -> tuple[list, list]:
    """(grad_norm points the rule judges, zero grad norms it sets aside as one step's sample of a logging window
    whose means say the run was learning)."""
    points = [(s, v, line) for s, v, line in history.series("grad_norm") if not math.isnan(v)]
    if logging_interval(history) <= 1:
        return points, []
    by_step = {p.step: p.values for p in history.points}
    kept, set_aside = [], []
    for point in points:
        values = by_step.get(point[0], {})
        flat = (
            values.get("frac_reward_zero_std", math.nan) >= settings.zero_std_fraction
            or values.get("reward_std", math.nan) == 0.0
        )
        if point[1] == 0.0 and not flat:
            set_aside.append(point)
            kept.append((point[0], math.nan, point[2]))  # not evidence either way: it breaks a stretch
        else:
            kept.append(point)
    return kept, set_aside

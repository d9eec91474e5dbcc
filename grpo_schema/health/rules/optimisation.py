"""Rules over the optimiser's numbers: a non-finite loss or gradient, no gradient at all, a learning rate of 0."""

from __future__ import annotations

import math

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.health.history import RunHistory
from grpo_schema.health.rules.base import config_value, finding, health_rule, steps_text, sustained
from grpo_schema.health.settings import HealthSettings


@health_rule("GRPO-A005", "error")
def nan_loss(history: RunHistory, settings: HealthSettings):
    """the loss or the gradient norm is NaN or infinite.

    From here on the weights are NaN or about to be: the run cannot recover. Usual causes: a learning rate far
    too high, fp16 overflow, a NaN reaching the loss through the advantages or log-probs."""
    lr = config_value(history, "learning_rate", None)
    fix = Fix(set={"learning_rate": float(f"{lr / 10:.3g}")}, safe=False,
              title="a tenth of the learning rate") if isinstance(lr, (int, float)) and lr > 0 else None
    for event in history.events:
        if event.get("kind") == "diverged" and isinstance(event.get("step"), int):
            yield finding("GRPO-A005", "error",
                          f"the model's next-token probabilities are NaN or infinite at step {event['step']}: the "
                          "weights diverged and generation cannot go on",
                          "lower learning_rate, keep max_grad_norm on (1.0), prefer bf16 to fp16; resume from the "
                          "last checkpoint before it",
                          metric="generation", steps=(event["step"], event["step"]), values=[str(event.get("error"))],
                          fields=("learning_rate", "max_grad_norm"), fix=fix, fatal=True, subject="generation")
            return
    for metric in ("loss", "grad_norm"):
        bad = [(s, v, line) for s, v, line in history.series(metric) if not math.isfinite(v)]
        if not bad:
            continue
        step, _, line = bad[0]
        yield finding("GRPO-A005", "error",
                      f"{metric} is {_spell(bad[0][1])} from step {step} ({len(bad)} logged step"
                      f"{'s' if len(bad) != 1 else ''})",
                      "lower learning_rate, keep max_grad_norm on (1.0), prefer bf16 to fp16; resume from the last "
                      "checkpoint before the first NaN",
                      metric=metric, steps=(step, bad[-1][0]), values=[_spell(v) for _, v, _ in bad],
                      fields=("learning_rate", "max_grad_norm"), fix=fix, fatal=True, line=line, subject=metric)
        return  # the grad norm follows the loss: one finding says it


def _spell(value: float) -> str:
    return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")


@health_rule("GRPO-A012", "warning")
def zero_learning_rate(history: RunHistory, settings: HealthSettings):
    """the learning rate is 0.

    Every logged step so far had learning_rate 0: the optimizer steps but nothing changes. Usually a warmup
    longer than the run (warmup_steps or warmup_ratio against max_steps), or learning_rate 0 itself."""
    series = [(s, v, line) for s, v, line in history.series("learning_rate") if not math.isnan(v)]
    zeros = []
    for item in series:
        if item[1] != 0.0:
            break
        zeros.append(item)
    if len(zeros) < settings.min_steps:
        return
    warmup = config_value(history, "warmup_steps", 0)
    yield finding("GRPO-A012", "warning",
                  f"learning_rate is 0 at {steps_text(zeros[0][0], zeros[-1][0])}",
                  "shorten the warmup (warmup_steps, warmup_ratio) below the run's length, or set learning_rate",
                  metric="learning_rate", steps=(zeros[0][0], zeros[-1][0]), values=[v for _, v, _ in zeros],
                  fields=("warmup_steps", "warmup_ratio", "learning_rate"),
                  fix=Fix(set={"warmup_steps": 0}, unset=("warmup_ratio",), safe=False, title="no warmup")
                  if warmup else None, line=zeros[0][2])


@health_rule("GRPO-A007", "warning")
def no_gradient(history: RunHistory, settings: HealthSettings):
    """the optimizer receives no gradient.

    grad_norm is 0 on several consecutive steps: no parameter moves. With GRPO this usually follows from
    advantages that are all 0 (GRPO-A001) and a KL term that is off (beta 0); it also happens when every
    completion token is masked (mask_truncated_completions with every completion truncated)."""
    found = sustained(history, "grad_norm", lambda v: v == 0.0, settings.min_steps)
    if found is None:
        return
    first, last, values, line = found
    yield finding("GRPO-A007", "warning",
                  f"grad_norm is 0 at {steps_text(first, last)}: the model does not change",
                  "see the other findings for the cause (groups with equal rewards, every completion masked); "
                  "the run is spending its compute on nothing",
                  metric="grad_norm", steps=(first, last), values=values, line=line)

"""The run-health rules: small named functions over a RunHistory, each with a stable code in area A.

A rule yields HealthFindings. The first line of its docstring is the code's title, the rest its explanation
(`grpo codes GRPO-A001`); docs/health.md has each code with an example, its threshold and why.
"""

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


# --- learning signal ---------------------------------------------------------------------------------------------
@health_rule("GRPO-A001", "warning")
def zero_variance_groups(history: RunHistory, settings: HealthSettings):
    """prompt groups with no learning signal.

    GRPO learns from the differences between the rewards of one prompt's completions. When every completion of
    a group gets the same reward, the group's advantages are all 0 and it contributes nothing; when that is true
    of (nearly) every group for several steps, the run learns nothing (frac_reward_zero_std near 1, loss and
    grad_norm near 0). Usual causes: too few completions per prompt, sampling that is not diverse, prompts that
    are all too easy or all too hard for the model, or a reward that cannot tell completions apart."""
    metric = "frac_reward_zero_std"
    found = sustained(history, metric, lambda v: v >= settings.zero_std_fraction, settings.min_steps)
    if found is None:
        found = _flat_groups_from_rows(history, settings)
        metric = "completions (groups with equal rewards)"
        if found is None:
            return
    first, last, values, line = found
    generations = int(config_value(history, "num_generations", 8))
    temperature = float(config_value(history, "temperature", 1.0))
    fixes = (Fix(set={"num_generations": generations * 2}, safe=False,
                  title=f"num_generations {generations} -> {generations * 2}: more completions per prompt"),
             Fix(set={"temperature": round(min(temperature + 0.3, 1.5), 2)}, safe=False,
                 title="a higher temperature: more diverse completions"))
    yield finding("GRPO-A001", "warning",
                  f"{share_range(values)} of prompt groups gave every completion the same "
                  f"reward at {steps_text(first, last)}: their advantages are 0 and they teach the model nothing",
                  "give each prompt more completions (num_generations), sample more diversely (temperature), "
                  "filter out prompts the model always or never solves (DAPO-style dynamic sampling: TRL has no "
                  "option for it, so filter the data), or check that the reward can tell completions apart",
                  metric=metric, steps=(first, last), values=values, fields=("num_generations", "temperature"),
                  fix=fixes[0], alternatives=fixes[1:], line=line)


def _flat_groups_from_rows(history: RunHistory, settings: HealthSettings):
    stretch: list[tuple[int, float]] = []
    for step in sorted(history.completions):
        stats = history.completions[step]
        if not stats.groups:
            continue
        share = stats.flat_groups / stats.groups
        if share >= settings.zero_std_fraction:
            stretch.append((step, share))
        elif len(stretch) >= settings.min_steps:
            break
        else:
            stretch = []
    if len(stretch) < settings.min_steps:
        return None
    return stretch[0][0], stretch[-1][0], [s for _, s in stretch], None


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


# --- rewards -----------------------------------------------------------------------------------------------------
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


def reward_names(history: RunHistory) -> list[str]:
    names = set(history.rewards)
    for metric in history.metric_names():
        parts = metric.split("/")
        if len(parts) >= 3 and parts[0] == "rewards":
            names.add("/".join(parts[1:-1]))
    return sorted(names)


def _bad_scores(history: RunHistory, kind: str, threshold: float, code: str, what: Callable[[str, str], str],
                hint: Callable[[str], str]):
    """One finding per reward function whose share of `kind` ("none" or "nan") scores is over the threshold;
    what(name, source) names the scores, hint(name) is the fix."""
    for name in reward_names(history):
        share, counted, steps, source = _reward_share(history, name, kind)
        if counted and share > threshold:
            yield finding(code, "warning",
                          f"reward function {name} returned {what(name, source)} for {percent(share)} of completions"
                          + (f" (at {steps_text(*steps)})" if steps else ""),
                          hint(name), metric=f"rewards/{name}/{kind}_frac", steps=steps, values=[share],
                          fields=("reward_funcs",), subject=name)


@health_rule("GRPO-A002", "warning")
def reward_returns_none(history: RunHistory, settings: HealthSettings):
    """a reward function returns None for many completions.

    TRL treats None as "this function does not apply to this row" and leaves it out of the sum, so a row whose
    every function returned None gets NaN and no advantage. A function meant for every row that returns None
    often (a parse that fails, an answer column missing) silently drops its signal."""
    # TRL's completion tables write a None score as NaN: there the two cannot be told apart
    yield from _bad_scores(
        history, "none", settings.reward_none_rate, "GRPO-A002",
        lambda name, source: "None or NaN" if history.none_includes_nan and source == "completions" else "None",
        lambda name: f"make {name} return a number for every completion it can judge (0.0 for a wrong answer); "
                     "None is for rows a function does not apply to")


@health_rule("GRPO-A003", "warning")
def reward_returns_nan(history: RunHistory, settings: HealthSettings):
    """a reward function returns NaN.

    A NaN reward is never meaningful: TRL's nan-aware sums drop it like a None, so the row silently loses that
    function's signal, and a reward NaN in every function makes the row's advantage NaN. It usually comes from a
    division by zero or a float('nan') default in the reward function."""
    yield from _bad_scores(
        history, "nan", settings.reward_nan_rate, "GRPO-A003", lambda name, source: "NaN",
        lambda name: f"find where {name} computes NaN (a 0/0, a float('nan') default) and return a number, "
                     "or None for a row it does not apply to")


@health_rule("GRPO-A004", "warning")
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
        yield finding("GRPO-A004", "warning",
                      f"reward function {name} took {slowest:.1f} s for one generation batch "
                      f"(threshold {settings.reward_seconds:g} s)",
                      f"make {name} async (it then runs beside the other functions), batch its remote calls, "
                      "or give it a timeout that returns None",
                      metric=metric, steps=steps, values=[v for _, v in values] or [slowest],
                      fields=("reward_funcs",), subject=name)


@health_rule("GRPO-A009", "warning")
def constant_reward(history: RunHistory, settings: HealthSettings):
    """a reward function gives every completion the same score.

    Its std is 0 on every logged step: it cannot tell completions apart, so it adds nothing to the advantages
    (and, alone, makes every group flat: GRPO-A001). A function that is constant by mistake: the wrong column,
    a format check the model never (or always) passes, a score rounded away."""
    for name in reward_names(history):
        series = [v for _, v, _ in history.series(f"rewards/{name}/std") if not math.isnan(v)]
        means = [v for _, v, _ in history.series(f"rewards/{name}/mean") if not math.isnan(v)]
        steps = [s for s, v, _ in history.series(f"rewards/{name}/std") if not math.isnan(v)]
        if len(series) < settings.min_steps or any(v > 1e-12 for v in series):
            continue
        constant = len(set(round(m, 9) for m in means)) == 1
        what = f"the same score ({means[0]:g})" if constant and means else "one score per step"
        yield finding("GRPO-A009", "warning",
                      f"reward function {name} gave every completion {what} at {steps_text(steps[0], steps[-1])} "
                      "(its std is 0)",
                      f"check what {name} reads (the dataset column, the completion's format) and that it can "
                      "score two completions differently",
                      metric=f"rewards/{name}/std", steps=(steps[0], steps[-1]), values=means or series,
                      fields=("reward_funcs",), subject=name)


# --- completions -------------------------------------------------------------------------------------------------
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


# --- optimisation ------------------------------------------------------------------------------------------------
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


@health_rule("GRPO-A008", "warning")
def entropy_collapse(history: RunHistory, settings: HealthSettings):
    """the policy's entropy has collapsed.

    The mean token entropy is near 0: the model puts all its probability on one token at each position, so
    completions stop differing and groups go flat. Often the end of a run that was learning."""
    found = sustained(history, "entropy", lambda v: v < settings.entropy_floor, settings.min_steps)
    if found is None:
        return
    first, last, values, line = found
    yield finding("GRPO-A008", "warning",
                  f"entropy is below {settings.entropy_floor:g} at {steps_text(first, last)}",
                  "lower the learning rate, add an entropy bonus (entropy_coef) or a KL term (beta), or stop at "
                  "the last checkpoint before the collapse",
                  metric="entropy", steps=(first, last), values=values, fields=("learning_rate", "beta"), line=line)


@health_rule("GRPO-A010", "warning")
def kl_runaway(history: RunHistory, settings: HealthSettings):
    """the KL to the reference model runs away.

    The mean per-token KL is well above what a GRPO run stays within: the policy has moved far from the
    reference, usually with reward hacking or degenerate completions."""
    found = sustained(history, "kl", lambda v: v > settings.kl_ceiling, settings.min_steps)
    if found is None:
        return
    first, last, values, line = found
    beta = float(config_value(history, "beta", 0.0) or 0.0)
    yield finding("GRPO-A010", "warning",
                  f"kl is above {settings.kl_ceiling:g} at {steps_text(first, last)} (up to {max(values):.3g})",
                  "raise beta, lower the learning rate, and look at the completions of these steps for reward "
                  "hacking",
                  metric="kl", steps=(first, last), values=values, fields=("beta", "learning_rate"),
                  fix=Fix(set={"beta": round(beta * 2, 6)}, safe=False, title="a stronger KL penalty")
                  if beta > 0 else None, line=line)


@health_rule("GRPO-A011", "warning")
def clip_ratio_high(history: RunHistory, settings: HealthSettings):
    """many tokens are clipped by the PPO ratio.

    A large share of tokens whose probability ratio left [1-epsilon, 1+epsilon] means the policy moves too far
    between generation and update: too high a learning rate, or too many passes over one generation
    (num_iterations, steps_per_generation)."""
    found = sustained(history, "clip_ratio/region_mean", lambda v: v > settings.clip_fraction, settings.min_steps)
    if found is None:
        return
    first, last, values, line = found
    yield finding("GRPO-A011", "warning",
                  f"{percent(max(values))} of tokens were clipped at {steps_text(first, last)}",
                  "lower learning_rate, or reuse each generation less (num_iterations, steps_per_generation)",
                  metric="clip_ratio/region_mean", steps=(first, last), values=values,
                  fields=("learning_rate", "num_iterations", "steps_per_generation"), line=line)


@health_rule("GRPO-A013", "warning")
def sampler_drift(history: RunHistory, settings: HealthSettings):
    """the generator's log-probs drift from the trainer's.

    With vLLM generation, the importance-sampling ratio between the trainer's and vLLM's log-probs should stay
    near 1. A ratio that drifts, or a large log-prob difference, means the generator samples from other weights
    than the trainer holds: the weight sync is failing or lossy (LoRA merged into quantised weights, a server
    that did not receive an update), or the two compute in different precisions."""
    found = sustained(history, "sampling/importance_sampling_ratio/mean",
                      lambda v: abs(v - 1.0) > settings.is_ratio_drift, settings.min_steps)
    metric = "sampling/importance_sampling_ratio/mean"
    if found is None:
        metric = "sampling/sampling_logp_difference/mean"
        found = sustained(history, metric, lambda v: v > settings.logp_difference, settings.min_steps)
    if found is None:
        return
    first, last, values, line = found
    fix = None
    if history.config.get("vllm_importance_sampling_correction") is False:
        fix = Fix(set={"vllm_importance_sampling_correction": True}, safe=False,
                  title="correct for the drift while it is found")
    yield finding("GRPO-A013", "warning",
                  f"{metric} is {min(values):.3g}-{max(values):.3g} at {steps_text(first, last)}: the generator "
                  "does not sample from the trainer's weights",
                  "check that weights reach vLLM after each step (server mode: the trainer must reach the server's "
                  "weight-update port; LoRA on 4-bit weights needs the merged 16-bit weights), run vLLM in the "
                  "trainer's dtype (vllm_model_impl, bf16), and keep vllm_importance_sampling_correction on",
                  metric=metric, steps=(first, last), values=values,
                  fields=("vllm_importance_sampling_correction", "vllm_mode"), fix=fix, line=line)


# --- the run as a whole ------------------------------------------------------------------------------------------
@health_rule("GRPO-A014", "error")
def resume_trains_nothing(history: RunHistory, settings: HealthSettings):
    """a resumed run has no step left to train.

    The run resumed from a checkpoint at or past its last step (max_steps, or the epochs' steps), so it loads,
    saves and ends without training (TRL's trainer runs one step past max_steps and stops): usually max_steps
    was not raised for a continued run, or resume_from_checkpoint names the final checkpoint."""
    for event in history.events:
        if event.get("kind") != "resume":
            continue
        start, total = event.get("from_step"), event.get("total_steps")
        trained = event.get("trained_steps")
        if not isinstance(start, int) or not isinstance(total, int):
            continue
        if start >= total or trained == 0:
            past = f" (the trainer still ran {trained} step{'s' if trained != 1 else ''} past it)" \
                if isinstance(trained, int) and trained > 0 else ""
            yield finding("GRPO-A014", "error",
                          f"the run resumed at step {start} of {total}: it had no step left to train{past}",
                          f"raise max_steps above {start} (or num_train_epochs) to continue training, or resume "
                          "from an earlier checkpoint",
                          steps=(start, start), values=[start, total], fields=("max_steps", "resume_from_checkpoint"),
                          fix=Fix(set={"max_steps": start + max(total, 1)}, safe=False,
                                  title=f"max_steps {total} -> {start + max(total, 1)}"),
                          subject=str(event.get("checkpoint", "")))


@health_rule("GRPO-A015", "warning")
def resume_replays_data(history: RunHistory, settings: HealthSettings):
    """a resumed run replays data it has already trained on.

    With ignore_data_skip, a run resumed from a checkpoint starts the data from the beginning instead of where
    the checkpoint stopped: the first steps see prompts again and the epoch count is off."""
    for event in history.events:
        if event.get("kind") == "resume" and event.get("ignore_data_skip") and (event.get("from_step") or 0) > 0:
            yield finding("GRPO-A015", "warning",
                          f"the run resumed at step {event['from_step']} with ignore_data_skip: it trains again on "
                          "the prompts of the steps before",
                          "unset ignore_data_skip so the resumed run continues the data where it stopped",
                          steps=(event["from_step"], event["from_step"]), fields=("ignore_data_skip",),
                          fix=Fix(unset=("ignore_data_skip",), safe=True, title="continue the data"))


def run_health_rules(history: RunHistory, settings: HealthSettings) -> list[HealthFinding]:
    out: list[HealthFinding] = []
    for item in HEALTH_RULES:
        out.extend(item.fn(history, settings))
    return out

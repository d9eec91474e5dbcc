"""The batch schedule: every derived quantity of a config at a declared world size, in one pure function.

Batch arithmetic lives only here. It follows TRL 1.16 (`GRPOConfig.__post_init__`, the RepeatSampler and the
trainer's generation buffer):

    b = per_device_train_batch_size, P = world size, G = num_generations, GA = gradient_accumulation_steps
    s = steps_per_generation, mu = num_iterations
    neither generation_batch_size nor s set:  s = GA,  B_gen = b * P * s
    only generation_batch_size set:           s = B_gen / (b * P)   (must divide)
    only s set:                               B_gen = b * P * s
    B_gen must hold whole groups: B_gen % G == 0.  Prompts per generation U = B_gen / G.
    Generation happens every s * mu micro-steps; an optimizer step every GA micro-steps.
    Old log-probs are computed when GA % (s * mu) != 0, or when vLLM's importance-sampling correction is on;
    the clip (epsilon) can only act when GA % (s * mu) != 0: otherwise the weights never change in between.
    With a dataset of N prompts: N // U generations per epoch (the remainder is skipped), (N // U) * s * mu
    micro-steps per epoch and ceil(that / GA) optimizer steps (transformers counts a shorter last window).
"""

from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

MAX_WORLD_SIZE_HINT = 64


@dataclass(frozen=True)
class Geometry:
    """The inputs of the batch arithmetic (so rules can ask 'what if the world size were N')."""

    per_device_train_batch_size: int
    num_generations: int
    gradient_accumulation_steps: int
    num_iterations: int
    generation_batch_size: int | None
    steps_per_generation: int | None
    eval_enabled: bool = False
    per_device_eval_batch_size: int = 8
    num_generations_eval: int | None = None
    # The release's batch meaning (grpo_schema.versions' BatchMeaning; TRL 1.16's when none is given): what
    # per_device_train_batch_size counts, the product its trainer checks against num_generations, and whether it
    # checks the evaluation batch.
    unit: str = "completions"  # "prompts": TRL 0.14, each row a prompt with num_generations completions
    checked: tuple[str, ...] = ("generation_batch_size",)  # () where no check is made
    eval_checked: bool = True

    @classmethod
    def of(cls, config: Any, meaning: Any = None) -> "Geometry":
        """The geometry of a config as a release reads it (`meaning`: its BatchMeaning, None for TRL 1.16)."""
        values: tuple[Any, ...] = (
            config.per_device_train_batch_size,
            config.num_generations,
            config.gradient_accumulation_steps,
            config.num_iterations,
            config.generation_batch_size,
            config.steps_per_generation,
            eval_enabled(config),
            config.per_device_eval_batch_size,
            config.num_generations_eval,
        )
        if meaning is not None:
            train, evaluation = meaning.train_check, meaning.eval_check
            values += (meaning.unit, train.product if train is not None else (), evaluation is not None)
        if cls is Geometry:
            try:
                return _geometry(*values)
            except TypeError:  # an unhashable value (never in a validated config): built, not shared
                pass
        return cls(*values)


# derive_plan and the batch rules ask for the geometry of the same config, and building this frozen dataclass costs
# ~2 us: the same values give the same immutable Geometry. typed=True keeps 8 and 8.0 (and True and 1) apart.
@functools.lru_cache(maxsize=1024, typed=True)
def _geometry(*values: Any) -> Geometry:
    return Geometry(*values)


def eval_enabled(config: Any) -> bool:
    return bool(config.eval_strategy != "no")


@dataclass(frozen=True)
class Problem:
    """Why a geometry has no plan at a world size: the failing check, for the batch rules to report."""

    kind: str  # "both_set" | "not_per_device_multiple" | "partial_groups" | "eval_partial_groups"
    generation_batch_size: int | None = None


def checked_product(geo: Geometry, world_size: int) -> int:
    """The batch the release checks against num_generations (the generation batch from TRL 0.18 on; the global
    micro-batch in 0.15-0.16; per_device x processes x gradient_accumulation_steps in 0.17)."""
    values = {
        "per_device_train_batch_size": geo.per_device_train_batch_size,
        "world_size": world_size,
        "gradient_accumulation_steps": geo.gradient_accumulation_steps,
        "steps_per_generation": geo.steps_per_generation or geo.gradient_accumulation_steps,
    }
    product = 1
    for name in geo.checked:
        product *= _generation_batch_size(geo, world_size) if name == "generation_batch_size" else values[name]
    return product


def problems(geo: Geometry, world_size: int) -> list[Problem]:
    """Every batch check the release makes at this world size; [] means it accepts the geometry (TRL 0.14 makes
    none: each process generates num_generations completions for each of its prompts)."""
    b, P = geo.per_device_train_batch_size, world_size
    found: list[Problem] = []
    if geo.generation_batch_size is not None and geo.steps_per_generation is not None:
        return [Problem("both_set")]
    gbs = _generation_batch_size(geo, P)
    if geo.generation_batch_size is not None and geo.generation_batch_size % (b * P):
        found.append(Problem("not_per_device_multiple", gbs))
    elif geo.checked and checked_product(geo, P) % geo.num_generations:
        found.append(Problem("partial_groups", checked_product(geo, P)))
    g_eval = geo.num_generations_eval or geo.num_generations
    if geo.eval_enabled and geo.eval_checked and (geo.per_device_eval_batch_size * P) % g_eval:
        found.append(Problem("eval_partial_groups", geo.per_device_eval_batch_size * P))
    return found


@dataclass(frozen=True)
class Relation:
    """One relation of the batch arithmetic at a world size, with its numbers: what the form and `grpo explain`
    show, so that a refused geometry is still a derivation with the step that breaks, not a missing schedule."""

    name: str  # what it gives or checks: a derived quantity's name, or "whole_groups", "eval_whole_groups", ...
    says: str  # the relation in words
    formula: str  # the relation with this config's numbers
    holds: bool
    problem: str | None = None  # the Problem kind it is when it fails (the batch rules report it)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "says": self.says,
            "formula": self.formula,
            "holds": self.holds,
            "problem": self.problem,
        }


def relations(geo: Geometry, world_size: int) -> list[Relation]:
    """The relations TRL's batch checks rest on, in the order it derives them, each marked holding or not.

    Whether one holds is read from `problems()`, the only place the checks are made; this adds the numbers. The
    list stops where a failed step leaves nothing to derive from (both set; a steps_per_generation that is not
    whole); the evaluation batch is independent and always listed when evaluation is on.
    """
    failing = {p.kind for p in problems(geo, world_size)}
    P, G = world_size, geo.num_generations
    if "both_set" in failing:
        return [
            Relation(
                "generation_batch_size",
                "set generation_batch_size or steps_per_generation, not both: each one determines the other",
                f"generation_batch_size = {geo.generation_batch_size}, "
                f"steps_per_generation = {geo.steps_per_generation}: both set",
                False,
                "both_set",
            )
        ]
    gbs = _generation_batch_size(geo, P)
    if geo.checked and "generation_batch_size" not in geo.checked:  # TRL 0.15-0.17: the trainer's own product
        names = " x ".join("world_size" if n == "world_size" else n for n in geo.checked)
        out = [
            Relation(
                "prompts_per_generation",
                f"{names} is a multiple of num_generations: every prompt's group"
                " of completions in one batch (checked by the trainer when the run starts)",
                f"({names}) % num_generations = {checked_product(geo, P)} % {G} = {checked_product(geo, P) % G}",
                "partial_groups" not in failing,
                "partial_groups",
            )
        ]
    elif not geo.checked:  # TRL 0.14: rows are prompts, each given num_generations completions; nothing to check
        out = [
            Relation(
                "generation_batch_size",
                "per_device_train_batch_size counts prompts; each process generates"
                " num_generations completions for each (no divisibility check)",
                f"per_device_train_batch_size x num_generations x world_size = "
                f"{geo.per_device_train_batch_size} x {G} x {P} = {gbs}",
                True,
            )
        ]
    else:
        out = [_steps_relation(geo, P, "not_per_device_multiple" not in failing)]
    if out[0].holds and geo.checked == ("generation_batch_size",):
        out.append(
            Relation(
                "prompts_per_generation",
                "generation_batch_size is a multiple of num_generations: "
                "every prompt's group of completions in one generation",
                f"generation_batch_size % num_generations = {gbs} % {G} = {gbs % G}",
                "partial_groups" not in failing,
                "partial_groups",
            )
        )
    if geo.eval_enabled and geo.eval_checked:
        g_eval, e = geo.num_generations_eval or G, geo.per_device_eval_batch_size
        out.append(
            Relation(
                "eval_whole_groups",
                "per_device_eval_batch_size x world_size is a multiple of "
                "num_generations_eval (num_generations when unset): whole groups per evaluation batch",
                f"(per_device_eval_batch_size x world_size) % num_generations_eval = ({e} x {P}) % "
                f"{g_eval} = {e * P % g_eval}",
                "eval_partial_groups" not in failing,
                "eval_partial_groups",
            )
        )
    return out


def _steps_relation(geo: Geometry, P: int, holds: bool) -> Relation:
    """How the generation batch and steps_per_generation follow from each other (TRL derives the unset one)."""
    b = geo.per_device_train_batch_size
    if geo.generation_batch_size is not None:
        gbs = geo.generation_batch_size
        return Relation(
            "steps_per_generation",
            "generation_batch_size is a multiple of per_device_train_batch_size"
            " x world_size: steps_per_generation is their quotient, whole micro-batches on every process",
            f"generation_batch_size / (per_device_train_batch_size x world_size) = {gbs} / ({b} x {P}) "
            f"= {_quotient(gbs, b * P)}",
            holds,
            "not_per_device_multiple",
        )
    unset = "" if geo.steps_per_generation is not None else " (steps_per_generation unset: gradient_accumulation_steps)"
    s = geo.steps_per_generation or geo.gradient_accumulation_steps
    return Relation(
        "generation_batch_size",
        f"generation_batch_size = per_device_train_batch_size x world_size x steps_per_generation{unset}",
        f"per_device_train_batch_size x world_size x steps_per_generation = {b} x {P} x {s} = {b * P * s}",
        True,
    )


def _quotient(numerator: int, denominator: int) -> str:
    whole, left = divmod(numerator, denominator)
    return str(whole) if not left else f"{numerator / denominator:.3g}, not whole (remainder {left})"


def rows_per_micro_batch(geo: Geometry) -> int:
    """Completions each process trains on per micro-step: per_device_train_batch_size, or that many prompts'
    groups where the release counts prompts (TRL 0.14)."""
    b = geo.per_device_train_batch_size
    return b * geo.num_generations if geo.unit == "prompts" else b


def _generation_batch_size(geo: Geometry, world_size: int) -> int:
    """Completions in one generation."""
    if geo.generation_batch_size is not None:
        return geo.generation_batch_size
    steps = geo.steps_per_generation or geo.gradient_accumulation_steps
    return rows_per_micro_batch(geo) * world_size * steps


def valid_world_sizes(geo: Geometry, limit: int = MAX_WORLD_SIZE_HINT) -> list[int]:
    return list(_valid_world_sizes(geo, limit))


@functools.lru_cache(maxsize=1024)
def _valid_world_sizes(geo: Geometry, limit: int) -> tuple[int, ...]:
    # A pure function of the geometry, asked for by every batch error's hint and by the fix search, which checks
    # the config again for each candidate edit: 64 x problems() each time was a fifth of such a re-check.
    return tuple(p for p in range(1, limit + 1) if not problems(geo, p))


@dataclass(frozen=True)
class RunPlan:
    """Every derived number of a run at one world size. `to_dict()` is the `derived` object of the JSON outputs."""

    world_size: int
    per_device_train_batch_size: int
    num_generations: int
    gradient_accumulation_steps: int
    steps_per_generation: int
    num_iterations: int
    generation_batch_size: int
    prompts_per_generation: int
    completions_per_process_per_generation: int
    generate_every_micro_steps: int
    optimizer_steps_per_generation: float
    generations_per_optimizer_step: float
    completions_per_optimizer_step: int
    prompts_per_optimizer_step: float
    old_logprobs_needed: bool
    clipping_active: bool
    steps_per_generation_source: str
    generation_batch_size_source: str
    # What per_device_train_batch_size counts in the judged release ("prompts" in TRL 0.14, whose trainer generates
    # num_generations completions for each), and the completions each process trains on per micro-step.
    per_device_unit: str = "completions"
    completions_per_micro_batch: int = 0
    # The sampler and the buffer (grpo-runtime.md §2.1-2.3).
    prompts_per_process_per_generation: float = 0.0
    sampler_batch_size: int = 0  # rows per process per dataloader batch (b x s)
    sampler_repeat_count: int = 0  # how often the sampler emits each chunk (s x mu)
    sampler_batches_skipped_per_generation: int = 0  # per process: s x mu - 1 copies the trainer ignores
    completions_per_prompt_per_optimizer_step: float = 0.0  # distinct completions of a prompt one step sees
    groups_split_across_processes: bool = False
    groups_split_across_optimizer_steps: bool = False
    # Sequence lengths (tokens).
    max_completion_length: int | None = None
    max_prompt_length: int | None = None
    context_length_needed: int | None = None
    context_length_note: str = ""
    vllm_max_num_seqs: int | None = None
    # With a dataset size (prompts in the training split).
    dataset_size: int | None = None
    generations_per_epoch: int | None = None
    unique_prompts_per_epoch: int | None = None
    prompts_dropped_per_epoch: int | None = None
    micro_steps_per_epoch: int | None = None
    optimizer_steps_per_epoch: int | None = None
    total_optimizer_steps: int | None = None
    epochs: float | None = None
    # name -> {"value", "source"}: where each input came from (file, command line, default, derived).
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # name -> the formula with its numbers, e.g. "16 x 7 x 4 = 448".
    formulas: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        # Not dataclasses.asdict, which deep-copies every leaf (about 150 us here, a quarter of a whole check_text;
        # 10 us this way). The leaves are scalars and strings: only the two dict fields need copying.
        out = {name: getattr(self, name) for name in _PLAN_FIELDS}
        out["inputs"] = {name: dict(entry) for name, entry in self.inputs.items()}
        out["formulas"] = dict(self.formulas)
        return out


# The field names in order, listed once: dataclasses.fields() filters the class's fields anew at every call.
_PLAN_FIELDS = tuple(f.name for f in fields(RunPlan))


def derive_plan(
    config: Any,
    world_size: int,
    *,
    dataset_size: int | None = None,
    max_prompt_length: int | None = None,
    sources: Mapping[str, str] | None = None,
    meaning: Any = None,
) -> RunPlan | None:
    """The schedule at `world_size`, or None when TRL would reject the batch geometry there.

    `meaning` is the judged release's BatchMeaning (None: TRL 1.16's): where per_device_train_batch_size counts
    prompts (TRL 0.14) the schedule is in completions, per_device_train_batch_size x num_generations per micro-step.

    `dataset_size` (prompts in the training split) adds the per-epoch figures; `max_prompt_length` (the longest
    prompt, in tokens, as the user declares it) gives the context length generation needs; `sources` maps input
    names (and "world_size") to where they came from ("file", "command line"); unnamed inputs are defaults.
    """
    geo = Geometry.of(config, meaning)
    if any(p.kind != "eval_partial_groups" for p in problems(geo, world_size)):
        return None
    b, G, GA, mu, P = (
        rows_per_micro_batch(geo),
        geo.num_generations,
        geo.gradient_accumulation_steps,
        geo.num_iterations,
        world_size,
    )
    gbs = _generation_batch_size(geo, P)
    s = gbs // (b * P)
    every = s * mu
    old_needed = GA % every != 0 or bool(config.use_vllm and config.vllm_importance_sampling_correction)
    # Completions one optimizer step trains on: GA micro-batches of b per process (repeats counted).
    per_step = b * P * GA
    core: dict[str, Any] = dict(
        world_size=P,
        per_device_train_batch_size=geo.per_device_train_batch_size,
        per_device_unit=geo.unit,
        completions_per_micro_batch=b,
        num_generations=G,
        gradient_accumulation_steps=GA,
        steps_per_generation=s,
        num_iterations=mu,
        generation_batch_size=gbs,
        prompts_per_generation=gbs // G,
        completions_per_process_per_generation=b * s,
        generate_every_micro_steps=every,
        optimizer_steps_per_generation=_ratio(every, GA),
        generations_per_optimizer_step=_ratio(GA, every),
        completions_per_optimizer_step=per_step,
        prompts_per_optimizer_step=_ratio(per_step, G * mu),
        old_logprobs_needed=old_needed,
        # The ratio pi/pi_old differs from 1 only when the weights change between generating a batch and
        # training on it; with vLLM's correction old log-probs are computed, but the clip still never acts.
        clipping_active=GA % every != 0,
        steps_per_generation_source=(
            "steps_per_generation"
            if geo.steps_per_generation is not None
            else "generation_batch_size"
            if geo.generation_batch_size is not None
            else "gradient_accumulation_steps"
        ),
        generation_batch_size_source=("generation_batch_size" if geo.generation_batch_size is not None else "derived"),
        prompts_per_process_per_generation=_ratio(b * s, G),
        sampler_batch_size=b * s,
        sampler_repeat_count=every,
        sampler_batches_skipped_per_generation=every - 1,
        # A step covers min(GA, s) of the s buffer slices of a generation: that share of each group, on average.
        completions_per_prompt_per_optimizer_step=_ratio(G * min(GA, s), s),
        groups_split_across_processes=P > 1 and (b * s) % G != 0,
        groups_split_across_optimizer_steps=GA % s != 0,
    )
    core.update(_lengths(config, b, s, max_prompt_length))
    if dataset_size is not None:
        core.update(_epoch_figures(config, dataset_size, gbs // G, every, GA))
    core["inputs"] = _inputs(config, core, sources or {})
    core["formulas"] = _formulas(core, config)
    return RunPlan(**core)


def _ratio(numerator: int, denominator: int) -> float:
    # The same float as float(Fraction(numerator, denominator)), which this replaced at a fifth of the cost: true
    # division of two ints is correctly rounded, whatever their common factors.
    return numerator / denominator


def _lengths(config: Any, b: int, s: int, max_prompt_length: int | None) -> dict[str, Any]:
    completion = config.max_completion_length
    if completion is None:
        needed, note = None, "max_completion_length is null: generation runs until EOS or the model's limit"
    elif max_prompt_length is None:
        needed = None
        note = (
            f"the longest prompt plus max_completion_length ({completion}); the prompt length is unknown "
            "(the release judged does not truncate prompts): pass --max-prompt-length to get a number"
        )
    else:
        needed = max_prompt_length + completion
        note = f"max prompt length ({max_prompt_length}) + max_completion_length ({completion}) = {needed}"
    colocate = config.use_vllm and config.vllm_mode == "colocate"
    seqs = b * config.vllm_tensor_parallel_size * s if colocate else None
    return dict(
        max_completion_length=completion,
        max_prompt_length=max_prompt_length,
        context_length_needed=needed,
        context_length_note=note,
        vllm_max_num_seqs=seqs,
    )


def _epoch_figures(config: Any, n: int, U: int, every: int, GA: int) -> dict[str, Any]:
    """Per-epoch counts as the RepeatSampler and transformers' loop produce them (a shorter last window counts)."""
    generations = n // U
    micro = generations * every
    per_epoch = max(-(-micro // GA), 1)
    if config.max_steps > 0:
        total = config.max_steps
    else:
        total = math.ceil(config.num_train_epochs * per_epoch)
    return dict(
        dataset_size=n,
        generations_per_epoch=generations,
        unique_prompts_per_epoch=generations * U,
        prompts_dropped_per_epoch=n - generations * U,
        micro_steps_per_epoch=micro,
        optimizer_steps_per_epoch=per_epoch,
        total_optimizer_steps=total,
        epochs=_ratio(total, per_epoch) if micro else None,
    )


_INPUTS = (
    "per_device_train_batch_size",
    "num_generations",
    "gradient_accumulation_steps",
    "num_iterations",
    "steps_per_generation",
    "generation_batch_size",
    "max_completion_length",
    "max_steps",
    "num_train_epochs",
    "seed",
    "shuffle_dataset",
)


def _inputs(config: Any, plan: dict[str, Any], sources: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    out = {"world_size": {"value": plan["world_size"], "source": sources.get("world_size", "default")}}
    for name in _INPUTS:
        out[name] = {"value": getattr(config, name), "source": sources.get(name, "default")}
    for name in ("steps_per_generation", "generation_batch_size"):
        if getattr(config, name) is None:  # TRL fills in the one that is not set
            out[name] = {"value": plan[name], "source": "derived"}
    for name in ("max_prompt_length", "dataset_size"):  # not config fields: the caller declares them
        if plan.get(name) is not None:
            out[name] = {"value": plan[name], "source": sources.get(name, "command line")}
    return out


_FORMULA_INPUTS = operator.itemgetter(
    "completions_per_micro_batch",
    "world_size",
    "steps_per_generation",
    "num_generations",
    "gradient_accumulation_steps",
    "num_iterations",
    "generation_batch_size",
    "generate_every_micro_steps",
)


def _formulas(plan: dict[str, Any], config: Any) -> dict[str, str]:
    out = dict(
        _batch_formulas(
            *_FORMULA_INPUTS(plan),
            config.generation_batch_size is not None,
            config.steps_per_generation is not None,
            bool(config.use_vllm),
        )
    )
    if plan["per_device_unit"] == "prompts":
        out.update(_prompt_formulas(plan))
    if plan.get("micro_steps_per_epoch") is not None:
        gbs, G, GA = (plan[k] for k in ("generation_batch_size", "num_generations", "gradient_accumulation_steps"))
        out["micro_steps_per_epoch"] = (
            f"(dataset_size // prompts_per_generation) x steps_per_generation x "
            f"num_iterations = ({plan['dataset_size']} // {gbs // G}) x "
            f"{plan['steps_per_generation']} x {plan['num_iterations']} = "
            f"{plan['micro_steps_per_epoch']}"
        )
        out["optimizer_steps_per_epoch"] = (
            f"ceil(micro_steps_per_epoch / gradient_accumulation_steps) = "
            f"ceil({plan['micro_steps_per_epoch']} / {GA}) = "
            f"{plan['optimizer_steps_per_epoch']}"
        )
    return out


def _prompt_formulas(plan: dict[str, Any]) -> dict[str, str]:
    """TRL 0.14's batch: per_device_train_batch_size prompts per process, num_generations completions each, one
    generation per micro-step (no sampler repeats, no steps_per_generation)."""
    b, G, P, rows = (
        plan[k] for k in ("per_device_train_batch_size", "num_generations", "world_size", "completions_per_micro_batch")
    )
    return {
        "steps_per_generation": "1: the release generates on every micro-step (it has no steps_per_generation)",
        "generation_batch_size": f"per_device_train_batch_size (prompts) x num_generations x world_size = {b} x {G} "
        f"x {P} = {rows * P}",
        "prompts_per_generation": f"per_device_train_batch_size x world_size = {b} x {P} = {b * P} prompts",
        "completions_per_process_per_generation": f"per_device_train_batch_size (prompts) x num_generations = {b} x "
        f"{G} = {rows}",
        "completions_per_optimizer_step": f"per_device_train_batch_size x num_generations x world_size x "
        f"gradient_accumulation_steps = {b} x {G} x {P} x "
        f"{plan['gradient_accumulation_steps']} = {plan['completions_per_optimizer_step']}",
    }


# The texts depend on these numbers and flags alone, and most checks of a service or an editor repeat the same
# few geometries: formatted once per geometry (~3 us each time otherwise). typed=True keeps 2 and 2.0 apart.
@functools.lru_cache(maxsize=1024, typed=True)
def _batch_formulas(
    b: int, P: int, s: int, G: int, GA: int, mu: int, gbs: int, every: int, gbs_set: bool, steps_set: bool, vllm: bool
) -> tuple[tuple[str, str], ...]:
    if gbs_set:
        steps = f"generation_batch_size / (per_device_train_batch_size x world_size) = {gbs} / ({b} x {P}) = {s}"
        batch = f"set in the file: {gbs}"
    else:
        source = "steps_per_generation" if steps_set else "gradient_accumulation_steps"
        default = source == "gradient_accumulation_steps"
        steps = f"{source} = {s}" + (" (the default: one generation per optimizer step)" if default else "")
        batch = f"per_device_train_batch_size x world_size x steps_per_generation = {b} x {P} x {s} = {gbs}"
    return (
        ("steps_per_generation", steps),
        ("generation_batch_size", batch),
        ("prompts_per_generation", f"generation_batch_size / num_generations = {gbs} / {G} = {gbs // G}"),
        (
            "completions_per_process_per_generation",
            f"per_device_train_batch_size x steps_per_generation = {b} x {s}"
            f" = {b * s}, cut into {s} slice{'s' if s != 1 else ''} of "
            f"{b}: one per micro-step"
            f"{f' of each of the {mu} passes' if mu > 1 else ''}",
        ),
        ("generate_every_micro_steps", f"steps_per_generation x num_iterations = {s} x {mu} = {every}"),
        (
            "completions_per_optimizer_step",
            f"per_device_train_batch_size x world_size x gradient_accumulation_steps = {b} x {P} x {GA} = {b * P * GA}",
        ),
        (
            "optimizer_steps_per_generation",
            f"steps_per_generation x num_iterations / gradient_accumulation_steps = {s} x {mu} / {GA}",
        ),
        (
            "old_logprobs_needed",
            f"gradient_accumulation_steps % (steps_per_generation x num_iterations) = {GA} % "
            f"{every} = {GA % every}" + (", or vLLM importance-sampling correction on" if vllm else ""),
        ),
    )

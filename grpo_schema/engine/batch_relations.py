"""The relations of the batch arithmetic at a world size, with their numbers: what the form and `grpo explain`
show, so that a refused geometry is still a derivation with the step that breaks, not a missing schedule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grpo_schema.engine.batch_geometry import Geometry, checked_product, generation_batch_size, problems


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
        return [_both_set(geo)]
    gbs = generation_batch_size(geo, P)
    out = [_generation_relation(geo, P, gbs, failing)]
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
        out.append(_eval_relation(geo, P, failing))
    return out


def _both_set(geo: Geometry) -> Relation:
    return Relation(
        "generation_batch_size",
        "set generation_batch_size or steps_per_generation, not both: each one determines the other",
        f"generation_batch_size = {geo.generation_batch_size}, "
        f"steps_per_generation = {geo.steps_per_generation}: both set",
        False,
        "both_set",
    )


def _generation_relation(geo: Geometry, P: int, gbs: int, failing: set[str]) -> Relation:
    """The first relation, which depends on what the release checks: the trainer's own product (TRL 0.15-0.17),
    nothing (0.14, where rows are prompts), or the steps per generation."""
    G = geo.num_generations
    if geo.checked and "generation_batch_size" not in geo.checked:  # TRL 0.15-0.17: the trainer's own product
        names = " x ".join("world_size" if n == "world_size" else n for n in geo.checked)
        return Relation(
            "prompts_per_generation",
            f"{names} is a multiple of num_generations: every prompt's group"
            " of completions in one batch (checked by the trainer when the run starts)",
            f"({names}) % num_generations = {checked_product(geo, P)} % {G} = {checked_product(geo, P) % G}",
            "partial_groups" not in failing,
            "partial_groups",
        )
    if not geo.checked:  # TRL 0.14: rows are prompts, each given num_generations completions; nothing to check
        return Relation(
            "generation_batch_size",
            "per_device_train_batch_size counts prompts; each process generates"
            " num_generations completions for each (no divisibility check)",
            f"per_device_train_batch_size x num_generations x world_size = "
            f"{geo.per_device_train_batch_size} x {G} x {P} = {gbs}",
            True,
        )
    return _steps_relation(geo, P, "not_per_device_multiple" not in failing)


def _eval_relation(geo: Geometry, P: int, failing: set[str]) -> Relation:
    g_eval, e = geo.num_generations_eval or geo.num_generations, geo.per_device_eval_batch_size
    return Relation(
        "eval_whole_groups",
        "per_device_eval_batch_size x world_size is a multiple of "
        "num_generations_eval (num_generations when unset): whole groups per evaluation batch",
        f"(per_device_eval_batch_size x world_size) % num_generations_eval = ({e} x {P}) % {g_eval} = {e * P % g_eval}",
        "eval_partial_groups" not in failing,
        "eval_partial_groups",
    )


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

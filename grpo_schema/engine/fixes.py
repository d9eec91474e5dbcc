"""Minimal edits for a failing batch geometry (GRPO-B001..B004), each one checked before it is offered.

For every batch error the candidates are the nearest values, below and above, of each knob that can repair it:
num_generations, per_device_train_batch_size, steps_per_generation / gradient_accumulation_steps /
generation_batch_size, the eval batch knobs, and the world size. Each candidate is applied to the mapping and the
whole check runs again; a candidate is offered only if the error is gone and no error appears that was not there
before. The cheapest (smallest relative change; changing the hardware costs extra) becomes the diagnostic's `fix`,
the cheapest edit of each other knob its `alternatives`, and all of them its hint.

Batch edits change what is trained, so they are never `safe` (`grpo validate --fix` leaves them to a person),
except dropping the redundant half of a consistent generation_batch_size + steps_per_generation pair.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator

from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.yamledit import EditError, apply_fix

MAX_OFFERED = 5
SEARCH_FACTOR = 8  # look for values up to 8x the current one
SEARCH_STEPS = 4096  # but never more than this many values away (a scan of 2**62 values never ends)
WORLD_SIZE_PENALTY = 0.5  # a different number of GPUs is a bigger change than a different number in the file
KNOB_ORDER = (
    "num_generations",
    "per_device_train_batch_size",
    "steps_per_generation",
    "gradient_accumulation_steps",
    "generation_batch_size",
    "per_device_eval_batch_size",
    "num_generations_eval",
    "num_processes",
)


@dataclass(frozen=True)
class Candidate:
    fix: Fix | None  # None: only the world size changes (it was given on the command line)
    world_size: int | None  # world size to check the edit at; None keeps the declared one
    cost: float
    text: str  # "set num_generations: 14"


def nearest(ok: Callable[[int], bool], current: int, low: int = 1, high: int | None = None) -> list[int]:
    """The closest value below and the closest above `current` (never `current`) for which `ok` holds, looking
    at most SEARCH_STEPS values each way: the scan is linear, and a batch field can hold any 64-bit integer."""
    high = min(high if high is not None else max(current * SEARCH_FACTOR, current + 64), current + SEARCH_STEPS)
    low = max(low, current - SEARCH_STEPS)
    below = next((v for v in range(current - 1, low - 1, -1) if ok(v)), None)
    above = next((v for v in range(current + 1, high + 1) if ok(v)), None)
    return [v for v in (below, above) if v is not None]


def _set(name: str, old: int, new: int, safe: bool = False) -> Candidate:
    fix = Fix(set={name: new}, safe=safe, title=f"{name} {old} -> {new}")
    return Candidate(fix, None, abs(new - old) / max(old, 1), f"set {name}: {new}")


def _world(result: Any, new: int) -> Candidate:
    cost = abs(new - result.world_size) / result.world_size + WORLD_SIZE_PENALTY
    if result.sources.get("world_size") not in (None, "file"):  # declared outside the mapping: num_processes loses
        return Candidate(None, new, cost, f"run on {new} processes")
    if not _takes_launch_keys(result):  # TRL < 0.29 refuses or ignores num_processes in the file
        return Candidate(None, new, cost, f"run on {new} processes (accelerate launch --num_processes {new})")
    fix = Fix(set={"num_processes": new}, safe=False, title=f"world size {result.world_size} -> {new}")
    return Candidate(fix, None, cost, f"set num_processes: {new} (run on {new} processes)")


def _release(result: Any) -> Any:
    from grpo_schema.engine.release import release_surface

    return release_surface(result.trl_version)


def _takes_launch_keys(result: Any) -> bool:
    release = _release(result)
    return release is None or release.front_end.unknown_keys == "accelerate"


def _reads(result: Any, candidate: Candidate) -> bool:
    """Whether the judged release reads every key the candidate sets (steps_per_generation came in 0.18)."""
    release = _release(result)
    return release is None or candidate.fix is None or all(k in release.fields for k in candidate.fix.set)


def _geometry(config: Any, world_size: int) -> tuple[int, int, int, int | None, int | None]:
    return (
        config.per_device_train_batch_size,
        config.num_generations,
        config.gradient_accumulation_steps,
        config.steps_per_generation,
        config.generation_batch_size,
    )


def _partial_groups(config: Any, P: int) -> Iterator[Candidate]:
    """GRPO-B001: the generation batch is not a multiple of num_generations."""
    b, G, GA, s, gbs = _geometry(config, P)
    total = gbs if gbs is not None else b * P * (s or GA)
    for g in nearest(lambda g: total % g == 0, G, low=2, high=total):
        yield _set("num_generations", G, g)
    if gbs is not None:
        step = math.lcm(G, b * P)
        for g in nearest(lambda g: g % step == 0, gbs, low=step):
            yield _set("generation_batch_size", gbs, g)
        return
    steps = s or GA
    for v in nearest(lambda v: (v * P * steps) % G == 0, b):
        yield _set("per_device_train_batch_size", b, v)
    for v in nearest(lambda v: (b * P * v) % G == 0, steps):
        yield _set("steps_per_generation", steps, v)  # keeps the optimizer batch as it is
        if s is None:
            yield _set("gradient_accumulation_steps", GA, v)


def _not_micro_batches(config: Any, P: int) -> Iterator[Candidate]:
    """GRPO-B003: generation_batch_size is not a multiple of per_device_train_batch_size x world size."""
    b, G, _, _, gbs = _geometry(config, P)
    step = math.lcm(G, b * P)
    for g in nearest(lambda g: g % step == 0, gbs, low=step):
        yield _set("generation_batch_size", gbs, g)
    for v in nearest(lambda v: gbs % (v * P) == 0, b, high=gbs):
        yield _set("per_device_train_batch_size", b, v)


def _both_set(config: Any, P: int) -> Iterator[Candidate]:
    """GRPO-B002: generation_batch_size and steps_per_generation are both set; keep one."""
    b, _, _, s, gbs = _geometry(config, P)
    consistent = gbs == b * P * s  # then the pair says one thing twice and dropping either changes nothing
    for drop, keep in (
        ("steps_per_generation", "generation_batch_size"),
        ("generation_batch_size", "steps_per_generation"),
    ):
        fix = Fix(unset=(drop,), safe=consistent, title=f"remove {drop}, keep {keep}")
        yield Candidate(fix, None, 0.0 if consistent else 0.5, f"remove {drop}")


def _eval_partial_groups(config: Any, P: int) -> Iterator[Candidate]:
    """GRPO-B004: per_device_eval_batch_size x world size is not a multiple of the eval group size."""
    b_eval, G_eval = config.per_device_eval_batch_size, config.num_generations_eval or config.num_generations
    for v in nearest(lambda v: (v * P) % G_eval == 0, b_eval):
        yield _set("per_device_eval_batch_size", b_eval, v)
    for g in nearest(lambda g: (b_eval * P) % g == 0, G_eval, low=2, high=b_eval * P):
        yield _set("num_generations_eval", G_eval, g)


_GENERATORS = {
    "GRPO-B001": _partial_groups,
    "GRPO-B002": _both_set,
    "GRPO-B003": _not_micro_batches,
    "GRPO-B004": _eval_partial_groups,
}
_WORLD_SIZE_CODES = ("GRPO-B001", "GRPO-B003", "GRPO-B004")


def candidates(code: str, result: Any) -> list[Candidate]:
    """Every candidate edit for one batch error, before re-checking (unordered)."""
    from grpo_schema.engine.batch_geometry import Geometry, problems, valid_world_sizes

    config = result.migrated or result.config  # the values the rules judged
    found = [c for c in _GENERATORS[code](config, result.world_size) if _reads(result, c)]
    if code in _WORLD_SIZE_CODES:
        from grpo_schema.engine.release import batch_meaning

        geometry = Geometry.of(config, batch_meaning(result.trl_version))
        ok = set(valid_world_sizes(geometry))
        found += [
            _world(result, p)
            for p in nearest(
                lambda p: p in ok and not problems(geometry, p), result.world_size, high=max(ok, default=1)
            )
        ]
    return found


def _errors(diagnostics: list[Diagnostic]) -> Counter:
    return Counter(d.code for d in diagnostics if d.severity == "error")


def _warnings(diagnostics: list[Diagnostic]) -> Counter:
    return Counter(d.code for d in diagnostics if d.severity == "warning")


def recheck(result: Any, candidate: Candidate, profiles: tuple, allow_env: tuple) -> Any | None:
    """The check of the edited mapping, or None when the edit cannot be applied."""
    from grpo_schema.engine.check import check_mapping

    try:
        mapping = apply_fix(result.raw, candidate.fix) if candidate.fix else result.raw
    except EditError:
        return None
    declared = result.world_size if result.sources.get("world_size") not in (None, "file") else None
    return check_mapping(
        mapping,
        path=result.path,
        world_size=candidate.world_size or declared,
        profiles=profiles,
        allow_env=allow_env,
        trl_version=result.trl_version,
        trl_version_source=result.trl_version_source,
    )


def accepted(result: Any, code: str, profiles: tuple, allow_env: tuple) -> list[Candidate]:
    """Candidates that remove `code` without adding any error, cheapest first (new warnings cost extra)."""
    before, before_warnings = _errors(result.diagnostics), _warnings(result.diagnostics)
    kept: dict[str, Candidate] = {}
    for candidate in candidates(code, result):
        after = recheck(result, candidate, profiles, allow_env)
        if after is None:
            continue
        errors = _errors(after.diagnostics)
        if errors[code] or any(n > before[c] for c, n in errors.items()):
            continue
        extra = sum((_warnings(after.diagnostics) - before_warnings).values())
        candidate = replace(candidate, cost=candidate.cost + extra)
        if candidate.text not in kept or candidate.cost < kept[candidate.text].cost:
            kept[candidate.text] = candidate
    best_per_knob: dict[str, Candidate] = {}
    for candidate in sorted(kept.values(), key=_rank):  # one edit per knob, so the world size is always among them
        best_per_knob.setdefault(_knob(candidate), candidate)
    return list(best_per_knob.values())[:MAX_OFFERED]


def _knob(candidate: Candidate) -> str:
    names = list(candidate.fix.set) + list(candidate.fix.unset) if candidate.fix else ["num_processes"]
    return min(names, key=lambda n: KNOB_ORDER.index(n) if n in KNOB_ORDER else len(KNOB_ORDER))


def _rank(candidate: Candidate) -> tuple[float, int]:
    knob = _knob(candidate)
    return (round(candidate.cost, 9), KNOB_ORDER.index(knob) if knob in KNOB_ORDER else len(KNOB_ORDER))


def with_fixes(diag: Diagnostic, offered: list[Candidate]) -> Diagnostic:
    """The diagnostic carrying the best fix, the others as alternatives, and all of them in its hint."""
    if not offered:
        return diag
    fixes = [c.fix for c in offered if c.fix is not None]
    hint = "smallest edits: " + ", or ".join(c.text for c in offered)
    # Its own sentence: in parentheses it read as part of the last alternative.
    hint += f". As written, the config is {diag.hint}." if diag.hint.startswith("valid for world sizes") else ""
    return replace(diag, fix=fixes[0] if fixes else diag.fix, alternatives=tuple(fixes[1:]), hint=hint)


def attach_batch_fixes(result: Any, profiles: tuple, allow_env: tuple) -> None:
    """Give every batch error of `result` its checked minimal edits (in place)."""
    if result.config is None:
        return
    result.diagnostics = [
        with_fixes(d, accepted(result, d.code, profiles, allow_env))
        if d.code in _GENERATORS and d.severity == "error"
        else d
        for d in result.diagnostics
    ]

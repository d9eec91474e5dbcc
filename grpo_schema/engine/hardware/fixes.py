"""The smallest edits that make a config fit its declared hardware, each one checked.

Candidates, cheapest first: turn activation checkpointing on; halve per_device_train_batch_size (again and
again) while raising gradient_accumulation_steps (or steps_per_generation) so the optimizer and generation
batches stay the same; ZeRO-3; a lower vllm_gpu_memory_utilization, or vLLM's sleep mode; LoRA. Each candidate is
applied to the mapping, the whole config checked again (grpo_schema.engine.fixes.recheck) and the estimate made again:
it is offered only when it then fits and no error appears that was not there before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterator

from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.fixes import MAX_OFFERED, Candidate, recheck, with_fixes

FIT_CODES = ("GRPO-H001", "GRPO-H002")


def _batch_candidates(result: Any) -> Iterator[Candidate]:
    config = result.config
    b, GA, s = config.per_device_train_batch_size, config.gradient_accumulation_steps, config.steps_per_generation
    smaller = b // 2
    while smaller >= 1:
        factor = b // smaller
        if b % smaller == 0:
            edit = {"per_device_train_batch_size": smaller, "gradient_accumulation_steps": GA * factor}
            if s is not None:
                edit["steps_per_generation"] = s * factor
            text = (
                f"set per_device_train_batch_size: {smaller} and gradient_accumulation_steps: {GA * factor} "
                "(same optimizer and generation batches)"
            )
            # the title names every key the fix changes: the accumulation keeps the optimizer batch the same
            title = ", ".join(
                f"{key} {was} -> {now}"
                for key, was, now in (
                    ("per_device_train_batch_size", b, smaller),
                    ("gradient_accumulation_steps", GA, GA * factor),
                    ("steps_per_generation", s, s * factor if s is not None else None),
                )
                if now is not None
            )
            yield Candidate(Fix(set=edit, safe=False, title=title), None, 0.2 + (b - smaller) / b, text)
        smaller //= 2


def candidates(report: Any, result: Any) -> Iterator[Candidate]:
    s = report.setup
    if not s.activation_checkpointing:
        yield Candidate(
            Fix(set={"activation_checkpointing": True}, safe=False, title="turn activation checkpointing on"),
            None,
            0.1,
            "set activation_checkpointing: true",
        )
    yield from _batch_candidates(result)
    if s.strategy not in ("zero3", "fsdp"):
        yield Candidate(
            Fix(set={"accelerate_config": "zero3"}, safe=False, title="shard with ZeRO-3"),
            None,
            0.6,
            "set accelerate_config: zero3 (or launch with a ZeRO-3 accelerate config)",
        )
    if s.use_vllm and s.vllm_mode == "colocate":
        if not s.vllm_sleep:
            yield Candidate(
                Fix(set={"vllm_enable_sleep_mode": True}, safe=False, title="vLLM sleep mode"),
                None,
                0.7,
                "set vllm_enable_sleep_mode: true (vLLM frees its memory while training)",
            )
        util = round(s.vllm_memory_utilization - 0.05, 2)
        while util >= 0.05:
            yield Candidate(
                Fix(
                    set={"vllm_gpu_memory_utilization": util},
                    safe=False,
                    title=f"vllm_gpu_memory_utilization -> {util}",
                ),
                None,
                0.3 + (s.vllm_memory_utilization - util) / s.vllm_memory_utilization,
                f"set vllm_gpu_memory_utilization: {util}",
            )
            util = round(util - 0.05, 2)
    if not s.use_peft:
        yield Candidate(
            Fix(set={"use_peft": True}, safe=False, title="train a LoRA adapter"),
            None,
            2.0,
            "set use_peft: true (a LoRA adapter instead of the full model)",
        )


def _knob(candidate: Candidate) -> str:
    return next(iter(candidate.fix.set))


def _try(report: Any, result: Any, hardware: Any, options: dict, fix: Fix, before: set) -> Any | None:
    """The fit after applying `fix`, or None when the edit cannot be applied or adds an error."""
    from grpo_schema.engine.check import resolve_profiles
    from grpo_schema.engine.hardware.fit import estimate_fit

    profiles = resolve_profiles(tuple(result.profile_args))
    after = recheck(result, Candidate(fix, None, 0.0, ""), profiles, ())
    if after is None or {d.code for d in after.diagnostics if d.severity == "error"} - before:
        return None
    return estimate_fit(after, hardware, **options)


def _fits(fit: Any) -> bool:
    return fit is not None and bool(fit.fits) and not any(d.code in FIT_CODES for d in fit.diagnostics)


# How an edit of the file changes the estimate's settings: candidates are screened on the estimate alone
# (microseconds), and only the edits about to be offered go through the whole check again (milliseconds each).
_SETUP_FIELDS = {
    "per_device_train_batch_size": "micro_batch",
    "gradient_accumulation_steps": "gradient_accumulation_steps",
    "activation_checkpointing": "activation_checkpointing",
    "vllm_enable_sleep_mode": "vllm_sleep",
    "vllm_gpu_memory_utilization": "vllm_memory_utilization",
    "use_peft": "use_peft",
}


def screen(report: Any, edit: dict[str, Any]) -> Any:
    """The estimate with `edit` applied to the settings (no re-check)."""
    from grpo_schema.engine.hardware.memory import estimate_memory

    changes = {_SETUP_FIELDS[k]: v for k, v in edit.items() if k in _SETUP_FIELDS}
    if edit.get("accelerate_config") == "zero3":
        changes["strategy"] = "zero3"
    return estimate_memory(report.model, replace(report.setup, **changes), report.capacity)


def _screen_fits(report: Any, estimate: Any) -> bool:
    kv_ok = estimate.kv_cache_tokens is None or estimate.kv_cache_tokens >= report.setup.sequence_length
    return estimate.total <= report.capacity and kv_ok


def accepted(report: Any, result: Any, hardware: Any, options: dict) -> list[Candidate]:
    """Single edits that fit (the cheapest of each knob); when none does, one combination built greedily: each
    round adds the edit that lowers the per-GPU total most, up to MAX_COMBINED edits."""
    before = {d.code for d in result.diagnostics if d.severity == "error"}
    pool = sorted(candidates(report, result), key=lambda c: c.cost)
    best: dict[str, Candidate] = {}
    totals: dict[int, float] = {}
    for index, candidate in enumerate(pool):
        if _knob(candidate) in best:
            continue
        estimate = screen(report, candidate.fix.set)
        totals[index] = estimate.total
        if not _screen_fits(report, estimate):
            continue
        fit = _try(report, result, hardware, options, candidate.fix, before)
        if _fits(fit):
            best[_knob(candidate)] = replace(candidate, text=candidate.text + f" (about {_gib(fit)} GiB)")
        if len(best) >= MAX_OFFERED:
            break
    if best:
        return sorted(best.values(), key=lambda c: c.cost)
    return _combined(report, result, hardware, options, pool, totals, before)


MAX_COMBINED = 4


def _combined(report, result, hardware, options, pool, totals, before) -> list[Candidate]:
    strongest: dict[str, int] = {}  # per knob, the single edit that lowered the total most
    for index, total in totals.items():
        knob = _knob(pool[index])
        if knob not in strongest or total < totals[strongest[knob]]:
            strongest[knob] = index
    chosen: list[Candidate] = []
    merged: dict[str, Any] = {}
    current = report.memory.total
    for _ in range(MAX_COMBINED):
        trials = []
        for knob, index in strongest.items():
            if any(_knob(c) == knob for c in chosen):
                continue
            trial = {**merged, **pool[index].fix.set}
            estimate = screen(report, trial)
            if estimate.total < current:  # cheaper edits win ties in reduction per cost
                trials.append((estimate.total * (1 + 0.05 * pool[index].cost), estimate, pool[index], trial))
        if not trials:
            return []
        _, estimate, candidate, merged = min(trials, key=lambda t: t[0])
        current = estimate.total
        chosen.append(candidate)
        if _screen_fits(report, estimate):
            fit = _try(report, result, hardware, options, Fix(set=merged, safe=False), before)
            if not _fits(fit):
                return []
            text = ", and ".join(c.text for c in chosen) + f" (together: about {_gib(fit)} GiB)"
            title = " + ".join(c.fix.title for c in chosen)
            return [Candidate(Fix(set=merged, safe=False, title=title), None, sum(c.cost for c in chosen), text)]
    return []


def _gib(fit: Any) -> str:
    return f"{fit.memory.total / 2**30:.1f}"


def attach_fit_fixes(report: Any, result: Any, hardware: Any, options: dict) -> None:
    offered = accepted(report, result, hardware, options)
    report.diagnostics = [with_fixes(d, offered) if d.code in FIT_CODES else d for d in report.diagnostics]

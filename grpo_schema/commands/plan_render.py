"""How `grpo plan` shows a fit report: the text (memory by part, the verdict, host RAM, run time) and the JSON
document; `grpo validate --hardware` and the service show the same lines."""

from __future__ import annotations

from typing import Any

from grpo_schema.engine.hardware.accelerators import GIB
from grpo_schema.engine.hardware.fit import FitReport
from grpo_schema.engine.words import plural

PHASE_WORDS = {"update": "updating (every gradient built)"}


def render_text(result: Any, report: FitReport, call: str = "") -> str:
    from grpo_schema.render.text import release_reason

    lines = [
        f"{result.path}" + (f" (GRPOConfig {call})" if call else "") + ":",
        f"  judged as {release_reason(result.trl_version, result.trl_version_source)}",
    ]
    if report.hardware is None:
        lines.append("  no hardware declared (pass --hardware SPEC, e.g. 8xH100-80GB)")
    else:
        lines.append(f"  hardware: {report.hardware.describe()}, world size {result.world_size}")
    if report.model is not None:
        m = report.model
        lines.append(
            f"  model: {m.name} ({m.total_params() / 1e9:.2f}B parameters, {m.num_layers} layers, vocab "
            f"{m.vocab_size:,}; from {m.source})"
        )
    for note in report.assumptions:
        lines.append(f"  assumes {note}")
    mem = report.memory
    if mem is not None:
        cap = report.capacity / GIB
        verdict = "fits" if report.fits else "does NOT fit"
        lines.append(
            f"  per GPU: {mem.total / GIB:.1f} GiB of {cap:.0f} GiB ({verdict}; peak while "
            f"{PHASE_WORDS.get(mem.peak_phase, mem.peak_phase)})"
        )
        width = max(len(p.name) for p in mem.parts)
        for part in mem.parts:
            marker = " " if part.phase in ("held", mem.peak_phase) else "~"
            lines.append(f"   {marker}{part.name:<{width}}  {part.bytes / GIB:7.2f} GiB  {part.phase:<10} {part.note}")
        lines.append("   (~: a phase other than the peak, not in the total)")
        if mem.kv_cache_tokens is not None:
            lines.append(
                f"  vLLM KV cache: {mem.kv_cache_tokens:,} tokens; a generation batch needs "
                f"{mem.kv_cache_tokens_needed:,}"
            )
    lines += host_lines(report)
    if report.time is not None:
        lines.append(f"  time: {report.time.describe()}")
    for diag in report.diagnostics:
        lines.append(f"  {diag.severity} {diag.code}: {diag.message}")
        if diag.hint:
            lines.append(f"    {diag.hint}")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if errors:
        them = "it" if len(errors) == 1 else "them"
        lines.append(f"  the config itself has {plural(len(errors), 'error')}: `grpo validate` lists {them}")
    return "\n".join(lines) + "\n"


# The assumptions that come from the launch files, the quantisation and the data: shown by every surface.
SOURCED_NOTES = (
    "distributed strategy",
    "optimizer states",
    "parameters ",
    "reduce bucket size",
    "max live parameters",
    "mixed precision",
    "launch file",
    "base projections",
    "prompts",
)


def memory_lines(report: FitReport) -> list[str]:
    """The fit in a few lines: the per-GPU total, where the sharding, quantisation and prompt length came from,
    and the host RAM of a node. grpo validate --hardware prints them, the form's memory panel shows them."""
    mem = report.memory
    if mem is None:
        return []
    verdict = "fits" if report.fits else "does NOT fit"
    lines = [
        f"memory per GPU: {mem.total / GIB:.1f} of {report.capacity / GIB:.0f} GiB ({verdict}; peak while "
        f"{PHASE_WORDS.get(mem.peak_phase, mem.peak_phase)})"
    ]
    lines += [f"assumes {note}" for note in report.assumptions if note.startswith(SOURCED_NOTES)]
    host = host_lines(report, indent="")
    if host:
        lines.append(host[0])
        lines += [line.strip() for line in host if line.lstrip().startswith("(DeepSpeed")]
    return lines


def host_lines(report: FitReport, indent: str = "  ") -> list[str]:
    """The host-RAM line of one node and its parts (the same text for grpo plan and grpo validate --hardware)."""
    host = report.host
    if host is None:
        return []
    if report.host_capacity is not None:
        verdict = (
            f" of {report.host_capacity / GIB:.0f} GiB ({report.host_capacity_source}; "
            + ("fits" if host.total <= report.host_capacity else "does NOT fit")
            + ")"
        )
    else:
        verdict = " (no host RAM declared: --host-ram GIB, or a node such as p5.48xlarge)"
    phase = "loading the model" if host.peak_phase == "loading" else "training"
    lines = [
        f"{indent}host RAM per node: {host.total / GIB:.1f} GiB{verdict}; peak while {phase}, "
        f"{host.processes} process{'es' if host.processes != 1 else ''}"
    ]
    for part in host.parts:
        marker = " " if part.phase in ("always", host.peak_phase) else "~"
        lines.append(f"{indent} {marker}{part.name:<18}  {part.bytes / GIB:7.2f} GiB  {part.note}")
    if host.deepspeed_estimate is not None:
        lines.append(
            f"{indent}  (DeepSpeed's own estimator, with its 1.5x buffer factor: "
            f"{host.deepspeed_estimate / GIB:.1f} GiB of CPU RAM a node)"
        )
    return lines


def plan_document(result: Any, report: FitReport) -> dict[str, Any]:
    out = report.to_dict()
    out.update(
        memory_lines=memory_lines(report),
        path=result.path,
        valid=result.valid,
        world_size=result.world_size,
        derived=result.derived,
        trl_version=result.trl_version,
        trl_version_source=result.trl_version_source,
        config_diagnostics=[d.to_dict() for d in result.diagnostics],
    )
    return out

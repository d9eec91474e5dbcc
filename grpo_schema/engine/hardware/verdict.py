"""What a fit report says: the diagnostics of the plan's verdict (does not fit, tight, a short KV cache, no room
for vLLM, the longest prompts, host RAM) and of the GPUs the hardware leaves the run."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.hardware.accelerators import GIB, Hardware
from grpo_schema.engine.hardware.fit_codes import (
    H_HOST_NO_FIT,
    H_KV_SHORT,
    H_LONGEST_PROMPT,
    H_NO_FIT,
    H_SERVER_GPU,
    H_TIGHT,
    H_TOO_FEW_GPUS,
    H_VLLM_NO_ROOM,
    no_fit_hint,
)
from grpo_schema.engine.hardware.memory import MemoryEstimate, estimate_memory
from grpo_schema.engine.words import plural

if TYPE_CHECKING:
    from grpo_schema.engine.hardware.fit import FitReport


def too_few_gpus(world_size: int, hw: Hardware, declared: bool) -> Diagnostic:
    """H007. The hint names "world size N" (the form's world-size button); a file that declares num_processes gets
    the edit of it as the fix."""
    return Diagnostic(
        H_TOO_FEW_GPUS,
        "error",
        f"{plural(world_size, 'training process')} but {hw.describe()} has {plural(hw.gpus, 'GPU')}",
        fields=("num_processes",) if declared else (),
        hint=f"declare at least {plural(world_size, 'GPU')}, or use world size {hw.gpus}",
        fix=Fix(set={"num_processes": hw.gpus}, safe=False, title=f"set num_processes: {hw.gpus}")
        if declared
        else None,
    )


def server_gpus(world_size: int, server: int, hw: Hardware) -> list[Diagnostic]:
    """H012: server-mode vLLM needs GPUs the training processes leave free."""
    if world_size + server <= hw.gpus:
        return []
    free = max(hw.gpus - server, 0)
    return [
        Diagnostic(
            H_SERVER_GPU,
            "error",
            f"vllm_mode server needs {plural(server, 'GPU')} of its own for "
            f"`trl vllm-serve`, but {plural(world_size, 'training process')} on {hw.describe()} leave "
            f"{plural(max(hw.gpus - world_size, 0), 'GPU')} free",
            fields=("vllm_mode",),
            hint=(
                f"use world size {free} and run the server on the other {plural(server, 'GPU')}"
                if free
                else f"declare at least {plural(world_size + server, 'GPU')}"
            )
            + ", or set vllm_mode: colocate",
        )
    ]


def longest_prompt(report: FitReport) -> list[Diagnostic]:
    """GRPO-H011 when the plan, made at the data's 95th percentile prompt, fits but the longest prompt does not:
    the step that draws it runs out of memory."""
    lengths, s = report.prompts, report.setup
    if lengths is None or report.memory is None or lengths.longest <= s.prompt_length or not report.fits:
        return []

    longest = estimate_memory(report.model, replace(s, prompt_length=lengths.longest), report.capacity)
    if longest.total <= report.capacity:
        return []
    return [
        Diagnostic(
            H_LONGEST_PROMPT,
            "warning",
            f"fits at the data's 95th-percentile prompt ({s.prompt_length} "
            f"tokens) but not at its longest ({lengths.longest} tokens): about {longest.total / GIB:.1f} "
            f"GiB per GPU of {report.capacity / GIB:.0f} GiB",
            fields=("per_device_train_batch_size",),
            hint="drop or shorten the longest prompts, or plan for them: prompt_length: "
            f"{lengths.longest} in the hardware: section",
        )
    ]


def host_fit(report: FitReport, config: Any, hw: Hardware, section: dict, host_ram: float | None) -> None:
    from grpo_schema.engine.hardware.host import estimate_host

    s = report.setup
    processes = max(min(s.world_size, hw.gpus_per_node), 1)
    report.host = estimate_host(
        report.model, s, processes, nodes=hw.nodes, workers=int(getattr(config, "dataloader_num_workers", 0) or 0)
    )
    for value, source in (
        (host_ram, "--host-ram"),
        (section.get("host_ram_gib"), "hardware: host_ram_gib"),
        (hw.host_ram_gib, f"the node {hw.node}"),
    ):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            report.host_capacity, report.host_capacity_source = float(value) * GIB, source
            break
    if report.host_capacity is not None and report.host.total > report.host_capacity:
        top = ", ".join(
            f"{p.name} {p.bytes / GIB:.1f}"
            for p in sorted(report.host.parts, key=lambda p: -p.bytes)
            if p.bytes > 0 and p.phase in ("always", report.host.peak_phase)
        )
        report.diagnostics.append(
            Diagnostic(
                H_HOST_NO_FIT,
                "error",
                f"needs about {report.host.total / GIB:.1f} GiB of host RAM per node "
                f"({report.host_capacity_source}: {report.host_capacity / GIB:.0f} GiB; peak while "
                f"{'loading the model' if report.host.peak_phase == 'loading' else 'training'}: {top} GiB)",
                fields=("deepspeed",) if getattr(config, "deepspeed", None) else (),
                hint="offload less (keep the parameters on the GPU: --offload optimizer), spread the run over more "
                "nodes, or declare a node with more RAM (--host-ram GIB)",
            )
        )


def kv_rounds(mem: MemoryEstimate) -> int:
    if mem.kv_cache_tokens and mem.kv_cache_tokens_needed and mem.kv_cache_tokens < mem.kv_cache_tokens_needed:
        return math.ceil(mem.kv_cache_tokens_needed / mem.kv_cache_tokens)
    return 1


def verdict(report: FitReport) -> list[Diagnostic]:
    mem, s = report.memory, report.setup
    out: list[Diagnostic] = []
    if s.use_vllm and s.vllm_mode == "colocate" and mem.kv_cache_tokens is not None:
        out += _vllm_share(report)
    out += _memory_fit(report)
    return out


def _vllm_share(report: FitReport) -> list[Diagnostic]:
    """Colocated vLLM: no room for one sequence's KV cache (an error), or too little for a generation batch at
    once (a warning)."""
    mem, cap, s = report.memory, report.capacity, report.setup
    out: list[Diagnostic] = []
    share = s.vllm_memory_utilization * cap / GIB
    if mem.kv_cache_tokens < s.sequence_length:
        out.append(
            Diagnostic(
                H_VLLM_NO_ROOM,
                "error",
                f"vLLM's share ({s.vllm_memory_utilization:g} x "
                f"{cap / GIB:.0f} GiB = {share:.1f} GiB) holds its weights "
                f"({mem.vllm_weights / GIB:.1f} GiB) but not one {s.sequence_length}-token "
                "sequence's KV cache",
                fields=("vllm_gpu_memory_utilization",),
                hint="raise vllm_gpu_memory_utilization, or use vllm_tensor_parallel_size > 1",
            )
        )
    elif mem.kv_cache_tokens < mem.kv_cache_tokens_needed:
        rounds = math.ceil(mem.kv_cache_tokens_needed / mem.kv_cache_tokens)
        out.append(
            Diagnostic(
                H_KV_SHORT,
                "warning",
                f"vLLM's KV cache holds about {mem.kv_cache_tokens:,} "
                f"tokens; one generation batch needs {mem.kv_cache_tokens_needed:,} "
                f"({s.generation_rows} sequences x {s.sequence_length} tokens): about {rounds} "
                "rounds of generation",
                fields=("vllm_gpu_memory_utilization",),
                hint="raise vllm_gpu_memory_utilization if the training side has room",
            )
        )
    return out


def _memory_fit(report: FitReport) -> list[Diagnostic]:
    """The tensors alone over the GPU's memory (an error), or only with the framework allowance (a warning)."""
    mem, cap, hw, s = report.memory, report.capacity, report.hardware, report.setup
    out: list[Diagnostic] = []
    need, tensors = mem.total / GIB, mem.tensors_total() / GIB
    top = ", ".join(f"{p.name} {p.bytes / GIB:.1f}" for p in sorted(mem.at_peak(), key=lambda p: -p.bytes)[:4])
    if mem.tensors_total() > cap:
        out.append(
            Diagnostic(
                H_NO_FIT,
                "error",
                f"needs about {need:.1f} GiB per GPU on {hw.describe()}: "
                f"{tensors - cap / GIB:.1f} GiB short before any framework allowance "
                f"({top} GiB)",
                fields=_fit_fields(report),
                hint=no_fit_hint(s.strategy),
            )
        )
    elif mem.total > cap:
        out.append(
            Diagnostic(
                H_TIGHT,
                "warning",
                f"needs about {need:.1f} GiB per GPU of {cap / GIB:.0f} GiB "
                f"({need - cap / GIB:.1f} GiB short with the framework allowance; {top} GiB)",
                fields=_fit_fields(report),
                hint=no_fit_hint(s.strategy),
            )
        )
    return out


def _fit_fields(report: FitReport) -> tuple[str, ...]:
    s = report.setup
    fields = ["per_device_train_batch_size"]
    if s.use_vllm and s.vllm_mode == "colocate":
        fields.append("vllm_gpu_memory_utilization")
    return tuple(fields)

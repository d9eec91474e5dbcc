"""Will it fit: a checked config + declared hardware -> per-GPU memory by part, a verdict, fixes and run time.

The settings come from the same CheckResult every surface uses (values written under names TRL 1.16 renamed,
such as torch_dtype, are still read: the estimate is about the run the file describes). The hardware comes from
`--hardware`, else the file's `hardware:` section. Diagnostics use the H area; an error only when the tensors
alone, without the framework allowance, exceed the GPU's memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from grpo_schema.engine.codes import H_SECTION, declare
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.hardware.accelerators import GIB, Hardware, HardwareError, parse_hardware
from grpo_schema.engine.hardware.memory import MemoryEstimate, Setup, estimate_memory
from grpo_schema.engine.hardware.models import ModelFacts, UnknownModel, read_config_json
from grpo_schema.engine.hardware.reads import EVERYTHING, MODEL, NOTHING, LocalReads
from grpo_schema.engine.hardware.resolve import resolve_model
from grpo_schema.engine.hardware.settings import setup_from
from grpo_schema.engine.hardware.timing import DEFAULT_MFU, TimeEstimate, estimate_time
from grpo_schema.engine.words import noun, plural

H_NO_FIT = declare(
    "GRPO-H001",
    "error",
    "does not fit in GPU memory",
    "The per-GPU tensors alone (weights, gradients, optimizer states, activations, logits, reference "
    "model, vLLM's share), without any allowance for the framework, exceed the declared GPU's memory: "
    "the run stops with an out-of-memory error at its first step. The fix lists the smallest edits "
    "that bring it under, each checked.",
)
H_TIGHT = declare(
    "GRPO-H002",
    "warning",
    "may not fit in GPU memory",
    "The tensors fit, but not with the allowance for the CUDA context, NCCL buffers and allocator "
    "fragmentation: the run is likely to run out of memory.",
)
H_KV_SHORT = declare(
    "GRPO-H003",
    "warning",
    "vLLM's KV cache is smaller than one generation batch",
    "In colocate mode vLLM gets vllm_gpu_memory_utilization of each GPU; after its weights the "
    "rest holds the KV cache. When it holds fewer tokens than the generation batch needs, vLLM "
    "queues sequences and generation takes several rounds.",
)
H_VLLM_NO_ROOM = declare(
    "GRPO-H004",
    "error",
    "vLLM's share cannot hold the model",
    "vllm_gpu_memory_utilization x GPU memory is smaller than vLLM's weights and reserve (or "
    "leaves no room for one full sequence's KV cache): vLLM refuses to start.",
)
H_UNKNOWN_MODEL = declare(
    "GRPO-H005",
    "info",
    "model unknown: no memory estimate",
    "The model is not a local directory, not in the Hub cache and not in the built-in "
    "catalogue. Pass its config.json (--model-config PATH) for an estimate.",
)
H_TOO_FEW_GPUS = declare(
    "GRPO-H007",
    "error",
    "more processes than declared GPUs",
    "The world size (training processes) is larger than the GPUs the hardware declares.",
)
H_BAD_SECTION = declare(
    "GRPO-H008",
    "error",
    "invalid hardware declaration",
    "The `hardware:` section or --hardware value does not name hardware; the message says what is accepted.",
)

NO_FIX_HINT = (
    "no edit of the file (up to 4 together) makes it fit: declare larger GPUs, offload the optimizer "
    "(offload_optimizer in the hardware: section), or train a smaller model"
)
# Under plain DDP there is nothing to offload to (offload is DeepSpeed's): the hint names the strategies that can.
NO_FIX_HINT_DDP = (
    "no edit of the file (up to 4 together) makes it fit: declare larger GPUs, shard the states (a "
    "ZeRO or FSDP launch, where the optimizer can also be offloaded), or train a smaller model"
)


def no_fit_hint(strategy: str) -> str:
    return NO_FIX_HINT_DDP if strategy == "ddp" else NO_FIX_HINT


SECTION_KEYS = {
    "spec",
    "model_config",
    "strategy",
    "offload_optimizer",
    "offload_params",
    "prompt_length",
    "mfu",
    "memory_gib",
    "peak_tflops",
    "host_ram_gib",
}
H_HOST_NO_FIT = declare(
    "GRPO-H010",
    "error",
    "does not fit in host RAM",
    "One node's host RAM (--host-ram, the hardware: section's host_ram_gib, or the node the "
    "spec names) is smaller than what its training processes keep there: the states DeepSpeed "
    "offloads to the CPU, the model as each process loads it, dataloader workers and the "
    "processes themselves. The kernel's OOM killer (or Ray's memory monitor) ends the run.",
)
H_SERVER_GPU = declare(
    "GRPO-H012",
    "error",
    "no GPU left for the vLLM server",
    "With vllm_mode: server, `trl vllm-serve` runs on GPUs of its own (vllm_tensor_parallel_size of "
    "them); the training processes must leave them free. World size plus the server's GPUs is more "
    "than the hardware declares, so the server would share a GPU with a training process, which "
    "neither the plan nor the run expects.",
)
H_LONGEST_PROMPT = declare(
    "GRPO-H011",
    "warning",
    "the longest prompts do not fit",
    "The plan uses the 95th percentile of the dataset's prompt lengths; at its longest prompt "
    "the same step needs more than the GPU has, so the step that draws such a prompt runs out "
    "of memory (TRL 1.16 does not truncate prompts).",
)
H_BAD_ENGINE = declare(
    "GRPO-H009",
    "error",
    "unknown engine",
    "The planner models the engine that runs the config: `trl` (TRL 1.16's GRPOTrainer: `trl grpo`, "
    "`grpo plan`'s default) or `grpo_runtime` (`grpo train`, `grpo launch`, the form).",
)


@dataclass
class FitReport:
    hardware: Hardware | None
    model: ModelFacts | None
    setup: Setup | None
    memory: MemoryEstimate | None
    time: TimeEstimate | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    engine: str = "trl"
    host: Any = None  # HostEstimate: one node's host RAM
    host_capacity: float | None = None  # bytes, when declared
    host_capacity_source: str = ""
    prompts: Any = None  # PromptLengths: the dataset's prompt lengths, when read from a local copy
    # Why there is no estimate (the diagnostic that stopped it, or what is missing); None once there is one.
    # Every surface says this reason, not the first warning it finds among the diagnostics.
    stopped_by: Diagnostic | None = None

    @property
    def capacity(self) -> float:
        return self.hardware.memory_bytes if self.hardware else 0.0

    @property
    def fits(self) -> bool | None:
        if self.memory is None or self.hardware is None:
            return None
        return self.memory.total <= self.capacity and not any(d.severity == "error" for d in self.diagnostics)

    def to_dict(self) -> dict[str, Any]:
        mem = self.memory
        per_gpu = None
        if mem is not None:
            per_gpu = {
                "capacity_bytes": int(self.capacity),
                "capacity_gib": round(self.capacity / GIB, 2),
                "total_bytes": int(mem.total),
                "total_gib": round(mem.total / GIB, 2),
                "headroom_gib": round((self.capacity - mem.total) / GIB, 2),
                "peak_phase": mem.peak_phase,
                "parts": [p.to_dict() for p in mem.parts],
                "at_peak": [p.name for p in mem.at_peak()],
                "vllm_kv_cache_tokens": mem.kv_cache_tokens,
                "vllm_kv_cache_tokens_needed": mem.kv_cache_tokens_needed,
            }
        return {
            "fits": self.fits,
            "engine": self.engine,
            "hardware": self.hardware.to_dict() if self.hardware else None,
            "model": self.model.to_dict() if self.model else None,
            "settings": _settings_dict(self.setup),
            "per_gpu": per_gpu,
            "time": self.time.to_dict() if self.time else None,
            "assumptions": list(self.assumptions),
            "host_per_node": self.host.to_dict(self.host_capacity) if self.host is not None else None,
            "prompt_lengths": self.prompts.to_dict() if self.prompts is not None else None,
            "no_estimate": self.no_estimate(),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }

    def no_estimate(self) -> dict[str, Any] | None:
        """{code, message, hint} saying why there is no per-GPU estimate, None when there is one."""
        if self.memory is not None:
            return None
        if self.stopped_by is not None:
            d = self.stopped_by
            return {"code": d.code, "message": d.message, "hint": d.hint}
        if self.hardware is None:
            return {
                "code": None,
                "message": "no hardware declared",
                "hint": "pass --hardware SPEC (e.g. 8xH100-80GB) or add a hardware: section",
            }
        return {
            "code": None,
            "message": "the config has errors that stop the estimate",
            "hint": "fix the config's errors first",
        }


def _settings_dict(setup: Setup | None) -> dict[str, Any] | None:
    if setup is None:
        return None
    from dataclasses import asdict

    return asdict(setup)


def section_of(result: Any) -> dict[str, Any]:
    raw = result.raw.get("hardware") if isinstance(result.raw, dict) else None
    if isinstance(raw, str):
        return {"spec": raw}
    return dict(raw) if isinstance(raw, dict) else {}


def hardware_of(result: Any, spec: str | None) -> tuple[Hardware | None, list[Diagnostic]]:
    section = section_of(result)
    text = spec or section.get("spec")
    if text is None and "memory_gib" not in section:
        return None, []
    try:
        hardware = parse_hardware(str(text if text is not None else f"{section['memory_gib']}GB"))
    except HardwareError as exc:
        field_name = () if spec else ("hardware",)
        return None, [
            Diagnostic(
                H_BAD_SECTION,
                "error",
                str(exc),
                fields=field_name,
                hint="write e.g. 8xH100-80GB, 2x8xA100-40GB or 80GB",
            )
        ]
    if not spec and ("memory_gib" in section or "peak_tflops" in section):
        from dataclasses import replace

        acc = hardware.accelerator
        acc = replace(
            acc,
            memory_gib=float(section.get("memory_gib", acc.memory_gib)),
            peak_tflops=section.get("peak_tflops", acc.peak_tflops),
        )
        hardware = replace(hardware, accelerator=acc)
    return hardware, []


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


# What the service says of a model it found nowhere it may look (the hardware: section's model_config is a path it
# does not read).
SERVICE_FIX = (
    "no model folder the service reads, its Hugging Face cache nor the built-in catalogue has it; run "
    "`grpo plan --model-config PATH` where its config.json is"
)


def estimate_fit(
    result: Any,
    hardware: str | Hardware | None = None,
    *,
    model_config: str | None = None,
    prompt_length: int | None = None,
    mfu: float | None = None,
    strategy: str | None = None,
    dataset_size: int | None = None,
    local_files: bool = True,
    engine: str | None = None,
    offload: str | None = None,
    host_ram: float | None = None,
    reads: LocalReads | None = None,
) -> FitReport:
    """The estimate and its verdict for one checked config, without the search for edits that make it fit
    (grpo_schema.engine.hardware.advise adds those). Never raises on bad input: problems become diagnostics.
    `local_files` False: the service, which reads no launch file, and only the model folder and dataset `reads`
    allows (none without it)."""
    reads = reads or (EVERYTHING if local_files else NOTHING)
    diagnostics: list[Diagnostic] = []
    if isinstance(hardware, Hardware):
        hw = hardware
    else:
        hw, diagnostics = hardware_of(result, hardware)
    if "hardware" in getattr(result, "raw", {}):
        extra = set(section_of(result)) - SECTION_KEYS
        diagnostics.append(
            Diagnostic(
                H_SECTION,
                "warning",
                "the hardware: section is read by grpo-config only; "
                "`trl grpo --config` would hand it to `accelerate launch`, which stops",
                fields=("hardware",),
                hint="pass --hardware on grpo's command line instead, or "
                "drop the section from the copy `trl grpo` reads",
            )
        )
        if extra:
            diagnostics.append(
                Diagnostic(
                    H_BAD_SECTION,
                    "error",
                    f"unknown {noun(len(extra), 'key')} in hardware: {sorted(extra)}",
                    fields=("hardware",),
                    hint=f"known keys: {', '.join(sorted(SECTION_KEYS))}",
                )
            )
    report = FitReport(hw, None, None, None, None, diagnostics)
    config = result.config
    from grpo_schema.engine.hardware.memory import ENGINES

    engine = engine or "trl"
    report.engine = engine
    if engine not in ENGINES:
        report.stopped_by = Diagnostic(
            H_BAD_ENGINE, "error", f"unknown engine {engine!r}", hint=f"use one of: {', '.join(ENGINES)}"
        )
        report.diagnostics.append(report.stopped_by)
        return report
    if hw is None:
        report.stopped_by = next((d for d in report.diagnostics if d.code == H_BAD_SECTION), None)
    if config is None or hw is None:
        return report
    section = section_of(result)
    try:
        path = model_config or section.get("model_config")
        if local_files and path:
            report.model = read_config_json(path)
        elif reads.model:
            report.model = resolve_model(
                config.model_name_or_path,
                config.model_revision,
                reads.base,
                **({} if local_files else {"fix": SERVICE_FIX}),
            )
        else:  # the built-in catalogue only, never a path a client names
            from grpo_schema.engine.hardware.catalogue import demo_model, lookup

            name = str(config.model_name_or_path or "")
            report.model = lookup(name) or demo_model(name)
            if report.model is None:
                raise UnknownModel(
                    f"unknown model {config.model_name_or_path!r}: the service knows the built-in "
                    f"catalogue only ({reads.refused.get(MODEL, 'it reads no model folder')}); "
                    "run `grpo plan --model-config PATH` locally"
                )
    except UnknownModel as exc:
        report.stopped_by = Diagnostic(
            H_UNKNOWN_MODEL,
            "info",
            str(exc),
            fields=("model_name_or_path",),
            hint="pass --model-config PATH/config.json",
        )
        report.diagnostics.append(report.stopped_by)
        return report
    given = prompt_length or section.get("prompt_length")
    if given is None and reads.dataset:
        from grpo_schema.engine.hardware.settings import prompt_lengths_of

        report.prompts = prompt_lengths_of(result, reads)
    report.setup, report.assumptions = setup_from(
        result,
        hw,
        prompt_length=given,
        strategy=strategy,
        section=section,
        engine=engine,
        offload=offload,
        local_files=local_files,
        lengths=report.prompts,
        reads=reads,
    )
    if report.setup is None:
        return report
    if report.setup.world_size > hw.gpus:
        report.diagnostics.append(too_few_gpus(report.setup.world_size, hw, "num_processes" in result.raw))
    elif report.setup.use_vllm and report.setup.vllm_mode == "server":
        report.diagnostics += server_gpus(report.setup.world_size, report.setup.vllm_tensor_parallel_size, hw)
    report.memory = estimate_memory(report.model, report.setup, hw.memory_bytes)
    _host(report, config, hw, section, host_ram)
    report.time = estimate_time(
        report.model,
        report.setup,
        result.plan,
        hw,
        mfu or section.get("mfu") or DEFAULT_MFU,
        config.max_steps if config.max_steps > 0 else None,
        kv_rounds=_kv_rounds(report.memory),
    )
    report.diagnostics += verdict(report)
    report.diagnostics += longest_prompt(report)
    return report


def longest_prompt(report: FitReport) -> list[Diagnostic]:
    """GRPO-H011 when the plan, made at the data's 95th percentile prompt, fits but the longest prompt does not:
    the step that draws it runs out of memory."""
    lengths, s = report.prompts, report.setup
    if lengths is None or report.memory is None or lengths.longest <= s.prompt_length or not report.fits:
        return []
    from dataclasses import replace

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


def _host(report: FitReport, config: Any, hw: Hardware, section: dict, host_ram: float | None) -> None:
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


def _kv_rounds(mem: MemoryEstimate) -> int:
    if mem.kv_cache_tokens and mem.kv_cache_tokens_needed and mem.kv_cache_tokens < mem.kv_cache_tokens_needed:
        return math.ceil(mem.kv_cache_tokens_needed / mem.kv_cache_tokens)
    return 1


def verdict(report: FitReport) -> list[Diagnostic]:
    mem, cap, hw, s = report.memory, report.capacity, report.hardware, report.setup
    out: list[Diagnostic] = []
    if s.use_vllm and s.vllm_mode == "colocate" and mem.kv_cache_tokens is not None:
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

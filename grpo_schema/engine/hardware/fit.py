"""Will it fit: a checked config + declared hardware -> per-GPU memory by part, a verdict, fixes and run time.

The settings come from the same CheckResult every surface uses (values written under names TRL 1.16 renamed,
such as torch_dtype, are still read: the estimate is about the run the file describes). The hardware comes from
`--hardware`, else the file's `hardware:` section. Diagnostics use the H area (`fit_codes.py`; what the verdict
says is in `verdict.py`); an error only when the tensors alone, without the framework allowance, exceed the GPU's
memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grpo_schema.engine.codes import H_SECTION
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.hardware.accelerators import GIB, Hardware, HardwareError, parse_hardware
from grpo_schema.engine.hardware.fit_codes import H_BAD_ENGINE, H_BAD_SECTION, H_UNKNOWN_MODEL
from grpo_schema.engine.hardware.memory import ENGINES, MemoryEstimate, Setup, estimate_memory
from grpo_schema.engine.hardware.models import ModelFacts, UnknownModel, read_config_json
from grpo_schema.engine.hardware.reads import EVERYTHING, MODEL, NOTHING, LocalReads
from grpo_schema.engine.hardware.resolve import resolve_model
from grpo_schema.engine.hardware.settings import setup_from
from grpo_schema.engine.hardware.timing import DEFAULT_MFU, TimeEstimate, estimate_time
from grpo_schema.engine.hardware.verdict import host_fit, kv_rounds, longest_prompt, server_gpus, too_few_gpus, verdict
from grpo_schema.engine.words import noun

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
    if isinstance(hardware, Hardware):
        hw, diagnostics = hardware, []
    else:
        hw, diagnostics = hardware_of(result, hardware)
    diagnostics += _section_diagnostics(result)
    report = FitReport(hw, None, None, None, None, diagnostics)
    config = result.config
    engine = engine or "trl"
    report.engine = engine
    if engine not in ENGINES:
        return _stopped(report, _unknown_engine(engine))
    if hw is None:
        report.stopped_by = next((d for d in report.diagnostics if d.code == H_BAD_SECTION), None)
    if config is None or hw is None:
        return report
    section = section_of(result)
    try:
        report.model = _model_of(config, section, model_config, local_files, reads)
    except UnknownModel as exc:
        return _stopped(report, _unknown_model(exc))
    _estimate_for_model(report, result, hw, section, prompt_length, strategy, offload, local_files, reads)
    if report.setup is not None:
        _estimate_run(report, result, hw, section, mfu, host_ram)
    return report


def _section_diagnostics(result: Any) -> list[Diagnostic]:
    """What a file's hardware: section itself earns: always a warning (TRL's own launcher stops on it), and an
    error for keys this section does not know."""
    if "hardware" not in getattr(result, "raw", {}):
        return []
    extra = set(section_of(result)) - SECTION_KEYS
    diagnostics = [
        Diagnostic(
            H_SECTION,
            "warning",
            "the hardware: section is read by grpo-config only; "
            "`trl grpo --config` would hand it to `accelerate launch`, which stops",
            fields=("hardware",),
            hint="pass --hardware on grpo's command line instead, or drop the section from the copy `trl grpo` reads",
        )
    ]
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
    return diagnostics


def _unknown_engine(engine: str) -> Diagnostic:
    return Diagnostic(H_BAD_ENGINE, "error", f"unknown engine {engine!r}", hint=f"use one of: {', '.join(ENGINES)}")


def _unknown_model(exc: UnknownModel) -> Diagnostic:
    return Diagnostic(
        H_UNKNOWN_MODEL, "info", str(exc), fields=("model_name_or_path",), hint="pass --model-config PATH/config.json"
    )


def _stopped(report: FitReport, reason: Diagnostic) -> FitReport:
    """The report with no estimate, stopped by `reason` (also one of its diagnostics)."""
    report.stopped_by = reason
    report.diagnostics.append(reason)
    return report


def _model_of(
    config: Any, section: dict[str, Any], model_config: str | None, local_files: bool, reads: LocalReads
) -> ModelFacts:
    """The model's shape: a named config.json (locally only), else the model folder or Hub cache where `reads`
    allows, else the built-in catalogue. Raises UnknownModel when none of them knows it."""
    path = model_config or section.get("model_config")
    if local_files and path:
        return read_config_json(path)
    if reads.model:
        return resolve_model(
            config.model_name_or_path,
            config.model_revision,
            reads.base,
            **({} if local_files else {"fix": SERVICE_FIX}),
        )
    # the built-in catalogue only, never a path a client names
    from grpo_schema.engine.hardware.catalogue import demo_model, lookup

    name = str(config.model_name_or_path or "")
    model = lookup(name) or demo_model(name)
    if model is None:
        raise UnknownModel(
            f"unknown model {config.model_name_or_path!r}: the service knows the built-in "
            f"catalogue only ({reads.refused.get(MODEL, 'it reads no model folder')}); "
            "run `grpo plan --model-config PATH` locally"
        )
    return model


def _estimate_for_model(
    report: FitReport,
    result: Any,
    hw: Hardware,
    section: dict[str, Any],
    prompt_length: int | None,
    strategy: str | None,
    offload: str | None,
    local_files: bool,
    reads: LocalReads,
) -> None:
    """Fill the report's prompt lengths (from a local dataset, when no length is given) and its setup."""
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
        engine=report.engine,
        offload=offload,
        local_files=local_files,
        lengths=report.prompts,
        reads=reads,
    )


def _estimate_run(
    report: FitReport, result: Any, hw: Hardware, section: dict[str, Any], mfu: float | None, host_ram: float | None
) -> None:
    """With a setup: the GPU count checks, per-GPU memory, host RAM, run time and the verdicts on them."""
    config = result.config
    if report.setup.world_size > hw.gpus:
        report.diagnostics.append(too_few_gpus(report.setup.world_size, hw, "num_processes" in result.raw))
    elif report.setup.use_vllm and report.setup.vllm_mode == "server":
        report.diagnostics += server_gpus(report.setup.world_size, report.setup.vllm_tensor_parallel_size, hw)
    report.memory = estimate_memory(report.model, report.setup, hw.memory_bytes)
    host_fit(report, config, hw, section, host_ram)
    report.time = estimate_time(
        report.model,
        report.setup,
        result.plan,
        hw,
        mfu or section.get("mfu") or DEFAULT_MFU,
        config.max_steps if config.max_steps > 0 else None,
        kv_rounds=kv_rounds(report.memory),
    )
    report.diagnostics += verdict(report)
    report.diagnostics += longest_prompt(report)

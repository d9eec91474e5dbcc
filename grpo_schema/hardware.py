"""Kept at this path for `grpo_schema.hardware.register_accelerator`: the package is grpo_schema.engine.hardware."""

from grpo_schema.engine.hardware import (
    CATALOGUE,
    Accelerator,
    FitReport,
    Hardware,
    HardwareError,
    MemoryEstimate,
    ModelFacts,
    Setup,
    UnknownModel,
    estimate_memory,
    parse_hardware,
    plan_fit,
    read_config_json,
    register_accelerator,
    resolve_model,
)

__all__ = [
    "Accelerator",
    "CATALOGUE",
    "FitReport",
    "Hardware",
    "HardwareError",
    "MemoryEstimate",
    "ModelFacts",
    "Setup",
    "UnknownModel",
    "estimate_memory",
    "parse_hardware",
    "plan_fit",
    "read_config_json",
    "register_accelerator",
    "resolve_model",
]

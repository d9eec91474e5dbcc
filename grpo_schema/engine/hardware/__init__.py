"""Will it fit: per-GPU memory and run time of a config on declared hardware (`grpo plan`)."""

from grpo_schema.engine.hardware.accelerators import (
    CATALOGUE,
    Accelerator,
    Hardware,
    HardwareError,
    parse_hardware,
    register_accelerator,
)
from grpo_schema.engine.hardware.advise import plan_fit
from grpo_schema.engine.hardware.fit import FitReport
from grpo_schema.engine.hardware.memory import MemoryEstimate, Setup, estimate_memory
from grpo_schema.engine.hardware.models import ModelFacts, UnknownModel, read_config_json
from grpo_schema.engine.hardware.resolve import resolve_model

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

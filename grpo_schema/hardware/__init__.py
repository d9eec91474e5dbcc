"""Will it fit: per-GPU memory and run time of a config on declared hardware (`grpo plan`)."""

from grpo_schema.hardware.accelerators import (CATALOGUE, Accelerator, Hardware, HardwareError, parse_hardware,
                                               register_accelerator)
from grpo_schema.hardware.fit import FitReport, plan_fit
from grpo_schema.hardware.memory import MemoryEstimate, Setup, estimate_memory
from grpo_schema.hardware.models import ModelFacts, UnknownModel, read_config_json, resolve_model

__all__ = ["Accelerator", "CATALOGUE", "FitReport", "Hardware", "HardwareError", "MemoryEstimate", "ModelFacts",
           "Setup", "UnknownModel", "estimate_memory", "parse_hardware", "plan_fit", "read_config_json",
           "register_accelerator", "resolve_model"]

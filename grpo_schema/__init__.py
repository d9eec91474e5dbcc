"""grpo-config's schema core: typed models of TRL 1.16's `trl grpo` surface, positioned diagnostics and the plan.

    from grpo_schema import check_file
    result = check_file("run.yaml", world_size=8)
    result.valid, result.diagnostics, result.plan, result.config

Importing this package never imports torch, transformers or accelerate, and never looks at the local hardware.
The Pydantic model (`GRPORunConfig`) is loaded on first use; validation itself runs on a compiled validator.
"""

from typing import Any

from grpo_schema.check import CheckResult, Override, check_file, check_mapping, check_text
from grpo_schema.diagnostics import Diagnostic, Fix
from grpo_schema.plan import RunPlan, derive_plan

__all__ = ["CheckResult", "Override", "check_file", "check_mapping", "check_text", "GRPORunConfig", "Diagnostic",
           "Fix", "RunPlan", "derive_plan"]
__version__ = "0.2.0"


def __getattr__(name: str) -> Any:
    if name == "GRPORunConfig":
        from grpo_schema.config import GRPORunConfig

        return GRPORunConfig
    raise AttributeError(f"module 'grpo_schema' has no attribute {name!r}")

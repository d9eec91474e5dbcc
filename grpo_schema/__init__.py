"""grpo-config's schema core: typed models of TRL 1.16's `trl grpo` surface, positioned diagnostics and the plan.

    from grpo_schema import check_file
    result = check_file("run.yaml", world_size=8)
    result.valid, result.diagnostics, result.plan, result.config

    from grpo_schema import GRPORunConfig               # the Pydantic model runs the same rules
    config = GRPORunConfig.from_yaml("run.yaml", world_size=8)   # raises pydantic.ValidationError on errors
    config.diagnostics, config.plan, config.to_yaml(), config.to_trl()

Importing this package never imports torch, transformers or accelerate, and never looks at the local hardware.
The Pydantic model (`GRPORunConfig`) is loaded on first use; validation itself runs on a compiled validator.
"""

from typing import TYPE_CHECKING, Any

from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.check_input import Override
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.plan import RunPlan, derive_plan
from grpo_schema.engine.validate import check_file, check_mapping, check_text
from grpo_schema.engine.view import set_model_builder

if TYPE_CHECKING:  # imported on first use at run time (pydantic's model machinery, TRL's dataclasses)
    from grpo_schema.api.config import GRPORunConfig
    from grpo_schema.api.trl_export import TrlArgs, TrlUnavailableError

__all__ = [
    "CheckResult",
    "Override",
    "check_file",
    "check_mapping",
    "check_text",
    "GRPORunConfig",
    "Diagnostic",
    "Fix",
    "RunPlan",
    "derive_plan",
    "TrlArgs",
    "TrlUnavailableError",
]
__version__ = "0.2.0"

_LAZY = {
    "GRPORunConfig": "grpo_schema.api.config",
    "TrlArgs": "grpo_schema.api.trl_export",
    "TrlUnavailableError": "grpo_schema.api.trl_export",
}


def _trusted_model(values: dict[str, Any]) -> Any:
    """ConfigView.to_model: the GRPORunConfig of values the engine already checked (loaded on first use)."""
    from grpo_schema.api.config import trusted_model

    return trusted_model(values)


set_model_builder(_trusted_model)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'grpo_schema' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

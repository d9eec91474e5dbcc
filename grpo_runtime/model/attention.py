"""Which attention implementation a run can load here. Kernels that need a package (and a CUDA GPU) this machine
lacks are replaced by PyTorch's scaled-dot-product attention: the same attention, computed at another speed and
memory cost, with a warning before the run (GRPO-U008). Decided without importing torch."""

from __future__ import annotations

import importlib.util
from typing import Any

FALLBACK = "sdpa"
# implementation -> the module it imports
NEEDS = {"flash_attention_2": "flash_attn", "flash_attention_3": "flash_attn_interface"}


def missing_module(name: Any) -> str | None:
    """The module `name` needs that is not installed (hub kernels, "org/repo", need `kernels`), else None."""
    if not isinstance(name, str):
        return None
    module = NEEDS.get(name) or ("kernels" if "/" in name else None)
    if module is None:
        return None
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else module


def requested(config) -> Any:
    """The implementation from_pretrained would get: model_init_kwargs win over attn_implementation."""
    return (config.model_init_kwargs or {}).get("attn_implementation", config.attn_implementation)


def loadable(name: Any) -> Any:
    return FALLBACK if missing_module(name) else name


def fallback_warning(config) -> str | None:
    name = requested(config)
    module = missing_module(name)
    if module is None:
        return None
    return (
        f"attn_implementation {name!r} needs the {module} package (and a CUDA GPU), which this machine lacks: "
        f"'{FALLBACK}' attention is used instead, the same attention at another speed and memory cost"
    )

"""The `hardware:` section (grpo_schema.engine.hardware): read by `grpo plan` and the form's memory bar, never by `trl grpo`.

Editors should neither flag it as unknown nor let a typo inside it pass, so the schema describes it like the checker
reads it: a spec string, or a mapping of the section's keys.
"""

from __future__ import annotations

from typing import Any

_SPEC = {
    "type": "string",
    "description": "Accelerators as NODESxGPUSxMODEL-MEMORY, GPUSxMODEL-MEMORY or a memory "
    "size: 8xH100-80GB, 2x8xA100-40GB, 80GB; or a node such as p5.48xlarge or 2xp4d.24xlarge (its host RAM too).",
    "examples": ["8xH100-80GB", "2x8xA100-40GB", "80GB"],
}


def hardware_property() -> dict[str, Any]:
    from grpo_schema.engine.hardware.settings import STRATEGIES

    description = (
        "The hardware `grpo plan` checks the run against (per-GPU memory and run time). Read by "
        "grpo-config only: `trl grpo --config` would hand it to `accelerate launch`, which stops "
        "(GRPO-H006), so keep it in a copy only grpo reads, or pass --hardware instead."
    )
    mapping = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "spec": _SPEC,
            "memory_gib": {"type": "number", "exclusiveMinimum": 0, "description": "Memory of one accelerator, GiB."},
            "peak_tflops": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "bf16 dense peak of one accelerator, TFLOP/s (for the run time).",
            },
            "strategy": {"enum": list(STRATEGIES), "description": "How model states are laid out across GPUs."},
            "offload_optimizer": {"type": "boolean", "description": "Optimizer states offloaded to the CPU."},
            "offload_params": {"type": "boolean", "description": "Parameters offloaded to the CPU (ZeRO-3)."},
            "prompt_length": {"type": "integer", "minimum": 1, "description": "Prompt tokens to plan for."},
            "model_config": {
                "type": "string",
                "description": "Path of the model's config.json (when the model is not in the catalogue or on disk).",
            },
            "mfu": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 1,
                "description": "Model FLOPs utilisation to assume for the run time.",
            },
            "host_ram_gib": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "Host RAM of one node, GiB (for the host-RAM verdict).",
            },
        },
    }
    return {
        "title": "Hardware",
        "description": description,
        "markdownDescription": description,
        "anyOf": [_SPEC, mapping],
    }

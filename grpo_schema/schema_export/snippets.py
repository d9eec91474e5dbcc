"""Whole-recipe snippets (`defaultSnippets`) that editors offer in an empty config.

Each is a starting point from a paper's settings as TRL documents them, written with TRL 1.16's keys; every one
passes `grpo validate` at world size 1 (a test checks). Model and dataset are small public ones to replace.
"""

from __future__ import annotations

from typing import Any

_START = {
    "model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct",
    "dataset_name": "trl-lib/DeepMath-103K",
    "reward_funcs": ["accuracy_reward"],
    "output_dir": "runs/grpo",
    "bf16": True,
    "per_device_train_batch_size": 8,
    "num_generations": 8,
    "max_completion_length": 1024,
    "learning_rate": 1e-6,
    "logging_steps": 10,
}

RECIPES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("GRPO: a first run", "The defaults that matter, one process, no vLLM.", {}),
    (
        "DAPO",
        "Token-level loss, clip-higher, no KL, overlong completions masked, 4 updates per generation.",
        {
            "loss_type": "dapo",
            "epsilon": 0.2,
            "epsilon_high": 0.28,
            "beta": 0.0,
            "mask_truncated_completions": True,
            "steps_per_generation": 4,
        },
    ),
    (
        "Dr. GRPO",
        "No length or difficulty bias: constant normaliser and no division by the group's std.",
        {"loss_type": "dr_grpo", "scale_rewards": "none", "beta": 0.0},
    ),
    (
        "GSPO",
        "Sequence-level importance ratios with tight clipping, several passes per generation batch.",
        {
            "importance_sampling_level": "sequence",
            "loss_type": "grpo",
            "epsilon": 3e-4,
            "epsilon_high": 4e-4,
            "beta": 0.0,
            "steps_per_generation": 4,
        },
    ),
    (
        "vLLM colocated on one GPU",
        "vLLM inside the training process, sharing the GPU; sleep mode frees its memory.",
        {"use_vllm": True, "vllm_mode": "colocate", "vllm_gpu_memory_utilization": 0.3, "vllm_enable_sleep_mode": True},
    ),
    (
        "vLLM server",
        "Generation on a separate `trl vllm-serve` process; num_processes counts training GPUs only.",
        {"use_vllm": True, "vllm_mode": "server", "vllm_server_base_url": "http://127.0.0.1:8000"},
    ),
)


def recipe_configs() -> list[tuple[str, dict[str, Any]]]:
    return [(label, {**_START, **overrides}) for label, _, overrides in RECIPES]


def default_snippets() -> list[dict[str, Any]]:
    return [
        {"label": label, "description": text, "body": {**_START, **overrides}} for label, text, overrides in RECIPES
    ]

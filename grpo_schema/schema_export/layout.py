"""Layout hints for the web form: section, order and "advanced" flags, kept out of the field definitions.

Every property gets `x-group` (its area), `x-group-title`, `x-order` (a position over the whole form) and
`x-advanced` (folded away by default). The schema's top-level `x-groups` lists the sections in form order with
their summaries. Which fields a first-time user needs is a presentation choice, so it lives here.
"""

from __future__ import annotations

from typing import Any

# A profile's script keys form the section `profile-NAME` (open-r1's system_prompt, ...).
PROFILE_GROUP_PREFIX = "profile-"

# The fields shown unfolded in each section; everything else is `x-advanced`.
ESSENTIAL = frozenset(
    {
        "model_name_or_path",
        "dtype",
        "attn_implementation",
        "dataset_name",
        "dataset_config",
        "dataset_train_split",
        "datasets",
        "reward_funcs",
        "reward_weights",
        "scale_rewards",
        "per_device_train_batch_size",
        "gradient_accumulation_steps",
        "num_generations",
        "generation_batch_size",
        "steps_per_generation",
        "num_iterations",
        "max_steps",
        "num_train_epochs",
        "max_completion_length",
        "temperature",
        "top_p",
        "loss_type",
        "beta",
        "epsilon",
        "epsilon_high",
        "importance_sampling_level",
        "use_vllm",
        "vllm_mode",
        "vllm_gpu_memory_utilization",
        "vllm_server_base_url",
        "learning_rate",
        "lr_scheduler_type",
        "warmup_steps",
        "weight_decay",
        "max_grad_norm",
        "bf16",
        "activation_checkpointing",
        "use_peft",
        "lora_r",
        "lora_alpha",
        "lora_target_modules",
        "load_in_4bit",
        "logging_steps",
        "report_to",
        "log_completions",
        "run_name",
        "eval_strategy",
        "eval_steps",
        "output_dir",
        "save_strategy",
        "save_steps",
        "save_total_limit",
        "push_to_hub",
        "hub_model_id",
        "seed",
        "num_processes",
        "accelerate_config",
    }
)


def place(
    properties: dict[str, Any],
    group: tuple[str, str, str],
    groups: list[dict[str, Any]],
    names: list[str] | None = None,
) -> None:
    """Put the named properties (default: all) in `group` = (id, title, summary), after those placed so far."""
    group_id, title, summary = group
    if all(g["id"] != group_id for g in groups):
        groups.append({"id": group_id, "title": title, "summary": summary, "order": len(groups)})
    start = 1 + max((p.get("x-order", -1) for p in properties.values() if isinstance(p, dict)), default=-1)
    for offset, name in enumerate(names if names is not None else list(properties)):
        prop = properties[name]
        prop["x-group"], prop["x-group-title"] = group_id, title
        prop["x-order"] = start + offset
        prop["x-advanced"] = name not in ESSENTIAL

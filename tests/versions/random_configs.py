"""Seeded random configs for one TRL release, drawn from the release tables: the release's own keys with valid and
invalid values, keys other releases read (renamed, removed or not yet there), keys no release reads, and batch
geometries that do and do not divide. The release oracle (test_release_parsers.py) runs each release's own parser
on them and holds grpo to its verdict, its unknown keys and the values it derives."""

from __future__ import annotations

import random
from typing import Any

from grpo_schema.versions import releases, surface

# The keys drawn, where the release reads them: what GRPO recipes set (the machine-bound ones, such as bf16, fsdp,
# deepspeed or report_to, are left to the corpus: the oracle parses on a CPU).
KEYS = (
    "learning_rate",
    "beta",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repetition_penalty",
    "epsilon",
    "epsilon_high",
    "loss_type",
    "scale_rewards",
    "num_iterations",
    "max_completion_length",
    "max_prompt_length",
    "logging_steps",
    "save_steps",
    "seed",
    "warmup_ratio",
    "warmup_steps",
    "weight_decay",
    "max_grad_norm",
    "num_train_epochs",
    "max_steps",
    "lr_scheduler_type",
    "mask_truncated_completions",
    "shuffle_dataset",
    "log_completions",
    "sync_ref_model",
    "ref_model_sync_steps",
    "ref_model_mixup_alpha",
    "use_vllm",
    "vllm_mode",
    "vllm_gpu_memory_utilization",
    "importance_sampling_level",
    "top_entropy_quantile",
    "torch_dtype",
    "dtype",
    "attn_implementation",
    "use_peft",
    "lora_r",
    "lora_alpha",
    "gradient_checkpointing",
    "disable_dropout",
    "vllm_device",
    "vllm_dtype",
    "use_liger_loss",
    "overwrite_output_dir",
    "num_completions_to_print",
    "wandb_log_unique_prompts",
    "log_unique_prompts",
    "delta",
    "max_prompt_length",
    "ds3_gather_for_generation",
    "cast_lm_head_to_fp32",
    "vllm_importance_sampling_correction",
    "use_transformers_paged",
    "dataset_train_split",
)
NO_RELEASE_READS = ("learning_rte", "reward_weight", "my_flag", "system_prompt")
CHOICES = {
    "loss_type": ["grpo", "bnpo", "dr_grpo", "dapo"],
    "scale_rewards": [True, False, "group", "batch", "none"],
    "vllm_mode": ["server", "colocate"],
    "importance_sampling_level": ["token", "sequence"],
    "lr_scheduler_type": ["cosine", "linear", "constant_with_warmup"],
    "attn_implementation": ["eager", "sdpa"],
    "torch_dtype": ["bfloat16", "float32", "auto"],
    "dtype": ["bfloat16", "float32", "auto"],
    "vllm_dtype": ["auto", "bfloat16"],
    "vllm_device": ["auto", "cuda:1"],
    "dataset_train_split": ["train", "validation"],
}
RANGES: dict[str, tuple[float, float]] = {  # valid values of the numeric keys
    "learning_rate": (1e-7, 1e-4),
    "beta": (0.0, 0.1),
    "temperature": (0.5, 1.2),
    "top_p": (0.5, 1.0),
    "min_p": (0.0, 0.2),
    "repetition_penalty": (1.0, 1.2),
    "epsilon": (0.1, 0.3),
    "epsilon_high": (0.2, 0.4),
    "warmup_ratio": (0.0, 0.2),
    "weight_decay": (0.0, 0.1),
    "max_grad_norm": (0.1, 1.0),
    "num_train_epochs": (1, 3),
    "ref_model_mixup_alpha": (0.1, 0.9),
    "vllm_gpu_memory_utilization": (0.2, 0.9),
    "top_entropy_quantile": (0.2, 1.0),
    "delta": (1.0, 4.0),
    "top_k": (0, 50),
    "num_iterations": (1, 4),
    "max_completion_length": (16, 2048),
    "max_prompt_length": (16, 1024),
    "logging_steps": (1, 50),
    "save_steps": (10, 500),
    "seed": (0, 100),
    "warmup_steps": (0, 100),
    "max_steps": (1, 1000),
    "ref_model_sync_steps": (1, 512),
    "lora_r": (4, 64),
    "lora_alpha": (8, 64),
    "num_completions_to_print": (1, 4),
}


def _all_keys() -> set[str]:
    keys: set[str] = set()
    for release in releases():
        keys |= set(surface(release).fields)
    return keys


def _value(rng: random.Random, name: str, info: Any, invalid: bool) -> Any:
    kind = info.type if info is not None else ("float" if name in RANGES else "str")
    if invalid:
        return {"bool": "maybe", "int": "lots", "float": "lots"}.get(kind, "bogus")
    if name in CHOICES:
        return rng.choice(CHOICES[name])
    if kind == "bool":
        return rng.random() < 0.5
    low, high = RANGES.get(name, (1, 8))
    if kind == "int" or (info is None and isinstance(low, int)):
        return rng.randint(int(low), int(high))
    return round(rng.uniform(low, high), 4)


def generate(release: str, count: int, seed: int = 0) -> list[dict[str, Any]]:
    """`count` configs for `release`, the same for the same seed."""
    table = surface(release)
    rng = random.Random(f"{seed}:{table.release}")
    own = [k for k in KEYS if k in table.fields]
    foreign = sorted((_all_keys() & set(KEYS)) - set(table.fields))
    configs = []
    for _ in range(count):
        config: dict[str, Any] = {"model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct", "dataset_name": "trl-lib/tldr"}
        if rng.random() < 0.9:
            config["reward_funcs"] = ["accuracy_reward"] if rng.random() < 0.5 else ["think_format_reward"]
        config["per_device_train_batch_size"] = rng.choice([1, 2, 3, 4, 6, 8])
        config["num_generations"] = rng.choice([2, 3, 4, 8]) if rng.random() < 0.97 else 1  # 1: no group at all
        if rng.random() < 0.4:
            config["gradient_accumulation_steps"] = rng.choice([1, 2, 3, 4])
        shape = rng.random()
        if shape < 0.2 and "generation_batch_size" in table.fields:
            config["generation_batch_size"] = rng.choice([4, 6, 8, 12, 16, 24])
        elif shape < 0.4 and "steps_per_generation" in table.fields:
            config["steps_per_generation"] = rng.choice([1, 2, 4])
        elif shape < 0.43 and "steps_per_generation" in table.fields:  # both: refused at parse time
            config.update(generation_batch_size=8, steps_per_generation=2)
        if rng.random() < 0.15:  # evaluation: whole groups per eval batch too (checked at parse from 0.18)
            config.update(
                eval_strategy="steps",
                eval_steps=rng.choice([10, 50]),
                per_device_eval_batch_size=rng.choice([1, 2, 3, 4, 8]),
            )
            if "num_generations_eval" in table.fields and rng.random() < 0.5:
                config["num_generations_eval"] = rng.choice([1, 2, 4])
        for name in rng.sample(own, k=min(len(own), rng.choice([0, 1, 2, 3, 4, 6]))):
            config[name] = _value(rng, name, table.fields[name], invalid=rng.random() < 0.15)
        if foreign and rng.random() < 0.3:  # a key another release reads: renamed, removed, or not yet there
            name = rng.choice(foreign)
            config[name] = _value(rng, name, None, invalid=False)
        if rng.random() < 0.1:
            config[rng.choice(NO_RELEASE_READS)] = rng.choice([True, 3, "x"])
        configs.append(config)
    return configs

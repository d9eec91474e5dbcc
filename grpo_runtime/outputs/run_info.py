"""`output_dir/run_info.json`: what really ran, written by the main process when a run starts.

    {"distributed_type": "FSDP", "sharding": "FSDP2 (fully_shard, reshard_after_forward=True)", "world_size": 2,
     "generation_backend": "transformers", "precision": "no", "weights_dtype": "float32",
     "device": "cpu", "versions": {...},
     "config_sha256": "..."}

`distributed_type` is accelerate's name (NO, MULTI_CPU, MULTI_GPU, FSDP, DEEPSPEED); `config_sha256` hashes the
validated config (every field, defaults included, as canonical JSON), so two runs with the same hash trained with
the same settings whatever the files looked like.
"""

from __future__ import annotations

import hashlib
import json
import platform
from importlib import metadata

PACKAGES = (
    "grpo-config",
    "torch",
    "transformers",
    "accelerate",
    "datasets",
    "deepspeed",
    "huggingface_hub",
    "peft",
    "vllm",
)


def config_sha256(config) -> str:
    canonical = json.dumps(config.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def versions(packages=PACKAGES, missing: str | None = None) -> dict[str, str | None]:
    """Python's version and each installed package's, read from its metadata (nothing is imported). A package that
    is not installed is left out, or given `missing` when that is set. run_info.json and the benchmarks use this."""
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if missing is not None:
                found[name] = missing
    return found


def run_info(config, accelerator, model_dtype=None) -> dict:
    from grpo_runtime.distributed.sharding import describe, kind
    from grpo_runtime.generation.backends import backend_name

    return {
        "distributed_type": kind(accelerator),
        "sharding": describe(accelerator),
        "world_size": accelerator.num_processes,
        "generation_backend": backend_name(config),
        "precision": accelerator.mixed_precision,  # autocast in use: no, bf16 or fp16
        "weights_dtype": str(model_dtype).removeprefix("torch.") if model_dtype is not None else None,
        "device": str(accelerator.device),
        "versions": versions(),
        "config_sha256": config_sha256(config),
    }


def write_run_info(config, parts, resumed_from: dict | None = None) -> None:
    """run_info.json, also with `total_steps` and, for a resumed run, `resumed_from` {"checkpoint", "step"} (the
    run-health rules read it: a resume at or past the last step trains nothing)."""
    info = run_info(config, parts.accelerator, parts.policy.dtype)
    info["total_steps"] = parts.total_steps
    if resumed_from is not None:
        info["resumed_from"] = resumed_from
    text = json.dumps(info, indent=1)
    (parts.output_dir / "run_info.json").write_text(text + "\n", encoding="utf-8")

"""Distributed training: DDP, FSDP, DeepSpeed and accelerate settings."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import FsdpOptions, Int, JsonDict, JsonDictOrPath


class DistributedParams(AreaParams):
    area = "distributed"
    title = "Distributed"
    summary = "Multi-process settings. The number of processes itself is the launch's num_processes (world size)."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "ddp_backend": {
            "nccl": "NVIDIA GPUs.",
            "gloo": "CPUs (and a fallback for GPUs).",
            "mpi": "An MPI installation.",
            "xccl": "Intel GPUs (XPU).",
            "hccl": "Huawei Ascend NPUs.",
            "cncl": "Cambricon MLUs.",
            "mccl": "Moore Threads GPUs (MUSA).",
        }
    }

    ds3_gather_for_generation: bool = Field(
        True,
        description="DeepSpeed ZeRO-3: gather the full weights for generation (faster; needs the memory). "
        "false is not compatible with vLLM generation.",
    )
    average_tokens_across_devices: bool = Field(True, description="Average token counts over processes for the loss.")
    accelerator_config: JsonDictOrPath | None = Field(
        None,
        description="accelerate Accelerator settings (split_batches, dispatch_batches, even_batches, "
        "use_seedable_sampler, non_blocking, gradient_accumulation_kwargs, use_configured_state), "
        "as a mapping, a JSON object string or a JSON file path.",
    )
    parallelism_config: JsonDict | None = Field(
        None,
        description="accelerate ParallelismConfig. Only usable from Python: TRL 1.16 cannot build it from "
        "YAML. GRPO supports no context or sequence parallelism.",
    )
    ddp_find_unused_parameters: bool | None = Field(None, description="DDP find_unused_parameters.")
    ddp_bucket_cap_mb: Int | None = Field(None, ge=1, description="DDP gradient bucket size, in MB.")
    ddp_broadcast_buffers: bool | None = Field(None, description="DDP broadcast_buffers.")
    ddp_static_graph: bool | None = Field(None, description="DDP static_graph.")
    ddp_backend: Literal["nccl", "gloo", "mpi", "xccl", "hccl", "cncl", "mccl"] | None = Field(
        None, description="Communication backend; null picks one per device (nccl on NVIDIA GPUs, gloo on CPU)."
    )
    ddp_timeout: Int = Field(1800, ge=1, description="Timeout of collective operations, in seconds.")
    fsdp: Annotated[bool | str | list[str] | None, FsdpOptions] = Field(
        None,
        description="Use PyTorch FSDP: true, or the legacy option string ('full_shard auto_wrap'), which is "
        "deprecated in favour of fsdp_config. Needs a distributed launch; not with deepspeed.",
    )
    fsdp_config: JsonDictOrPath | None = Field(
        None, description="FSDP settings as a mapping, JSON object string or JSON file path."
    )
    deepspeed: JsonDictOrPath | None = Field(
        None,
        examples=["configs/zero3.json"],
        description="DeepSpeed config: a JSON file path, a JSON object string or a mapping. Not with fsdp.",
    )
    local_rank: Int = Field(-1, description="Set by the launcher; do not set it in a config (deprecated).")
    ignore_bias_buffers: bool = Field(
        False, description="Ignore boolean bias buffers in DDP (a workaround for some models)."
    )


class RunParams(AreaParams):
    area = "run"
    title = "Reproducibility and script"
    summary = "Seeds and the script's do_* switches."

    seed: Int = Field(42, description="Random seed for model init, the data order and sampling.")
    data_seed: Int | None = Field(None, description="Separate seed for data sampling; null uses seed.")
    full_determinism: bool = Field(
        False, description="Deterministic algorithms everywhere (slower); for debugging reproducibility."
    )
    do_train: bool = Field(False, description="Script switch kept for compatibility; GRPO always trains.")
    do_predict: bool = Field(False, description="Script switch kept for compatibility; not used by GRPO.")

"""Generation with vLLM: colocated in the training processes, or a separate server."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float, Int


class VllmParams(AreaParams):
    area = "vllm"
    title = "vLLM"
    summary = (
        "Generate with vLLM instead of transformers. 'colocate' runs vLLM inside every training process; "
        "'server' talks to a separate `trl vllm-serve` process on other GPUs."
    )
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "vllm_mode": {
            "colocate": "vLLM runs inside each training process, sharing its GPU (vllm_gpu_memory_utilization).",
            "server": "A separate `trl vllm-serve` process on its own GPUs; the trainer sends weights over NCCL.",
        },
        "vllm_model_impl": {
            "vllm": "vLLM's own model code (fastest).",
            "transformers": "The transformers model code run by vLLM, for architectures vLLM lacks.",
        },
    }

    use_vllm: bool = Field(False, description="Generate completions with vLLM (the vllm package must be installed).")
    vllm_mode: Literal["server", "colocate"] = Field(
        "colocate",
        description="'colocate': vLLM shares the training GPUs (tune vllm_gpu_memory_utilization). 'server': a "
        "separate vLLM server on its own GPUs, reached at vllm_server_base_url or host:port.",
    )
    vllm_model_impl: Literal["vllm", "transformers"] = Field(
        "vllm", description="Model implementation inside vLLM: its own ('vllm') or the transformers one."
    )
    vllm_enable_sleep_mode: bool = Field(
        False, description="Colocate mode: offload vLLM weights and KV cache while training, freeing GPU memory."
    )
    vllm_structured_outputs_regex: str | None = Field(
        None, description="Regular expression that completions must match (vLLM structured outputs)."
    )
    vllm_server_base_url: str | None = Field(
        None,
        examples=["http://10.0.0.2:8000"],
        description="Server mode: base URL of the vLLM server, e.g. http://10.0.0.2:8000. When set, "
        "vllm_server_host and vllm_server_port are ignored.",
    )
    vllm_server_host: str = Field("0.0.0.0", description="Server mode: host of the vLLM server.")
    vllm_server_port: Int = Field(8000, ge=1, le=65535, description="Server mode: HTTP port of the vLLM server.")
    vllm_server_timeout: Float = Field(
        240.0, gt=0, description="Server mode: seconds to wait for the server before giving up."
    )
    vllm_group_port: Int = Field(
        51216, ge=1, le=65535, description="Server mode: port of the NCCL group that pushes weights to the server."
    )
    vllm_gpu_memory_utilization: Float = Field(
        0.3,
        gt=0,
        le=1,
        description="Colocate mode: fraction (not percent) of each GPU's memory vLLM may take, in (0, 1].",
    )
    vllm_max_model_length: Int | None = Field(
        None,
        examples=[4096],
        ge=1,
        description="Colocate mode: context length vLLM reserves, in tokens; must hold the longest prompt plus "
        "max_completion_length. null lets vLLM use the model's maximum.",
    )
    vllm_tensor_parallel_size: Int = Field(
        1, ge=1, description="Colocate mode: GPUs each vLLM engine spans. Must divide the number of processes."
    )

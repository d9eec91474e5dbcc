"""`accelerate launch` options written in the config file.

`trl grpo` forwards every key it does not know to `accelerate launch`, so recipes carry launch options such as
`num_processes`. They are typed here; `num_processes` is the declared world size when `--world-size` is not given.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.rules.distributed import BUNDLED_ACCELERATE_CONFIGS
from grpo_schema.engine.types import Float, Int


class LaunchParams(AreaParams):
    area = "launch"
    title = "Launch (accelerate)"
    summary = (
        "Options for `accelerate launch`. num_processes is the total number of training processes over "
        "all machines: the world size every batch rule is checked against."
    )
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "mixed_precision": {
            "no": "Full precision.",
            "fp16": "16-bit float mixed precision.",
            "bf16": "bfloat16 mixed precision.",
            "fp8": "8-bit float mixed precision (recent GPUs, with Transformer Engine or MS-AMP).",
        },
        "zero_stage": {
            0: "ZeRO off (plain data parallelism).",
            1: "Shard optimizer states.",
            2: "Shard optimizer states and gradients.",
            3: "Shard optimizer states, gradients and weights.",
        },
    }

    num_processes: Int | None = Field(
        None,
        examples=[8],
        ge=1,
        description="Training processes over all machines (world size). Exclude GPUs reserved for a vLLM server.",
    )
    num_machines: Int | None = Field(None, examples=[2], ge=1, description="Machines taking part.")
    machine_rank: Int | None = Field(None, ge=0, description="Rank of this machine (0 for the main one).")
    main_process_ip: str | None = Field(None, examples=["10.0.0.1"], description="Address of the main machine.")
    main_process_port: Int | None = Field(
        None, examples=[29500], ge=1, le=65535, description="Port of the main process."
    )
    mixed_precision: Literal["no", "fp16", "bf16", "fp8"] | None = Field(
        None, description="accelerate's mixed precision (bf16/fp16 in the config take precedence for training)."
    )
    accelerate_config: str | None = Field(
        None,
        examples=["zero3", "configs/accelerate.yaml"],
        description="`trl grpo` only: an accelerate config file path or a bundled name ("
        + ", ".join(BUNDLED_ACCELERATE_CONFIGS)
        + ").",
    )
    config_file: str | None = Field(None, description="accelerate config file path.")
    multi_gpu: bool | None = Field(None, description="Launch a multi-GPU (DDP) run.")
    cpu: bool | None = Field(None, description="Launch on CPU only.")
    gpu_ids: str | None = Field(None, examples=["0,1,2,3"], description="GPUs to use, e.g. '0,1,2' or 'all'.")
    same_network: bool | None = Field(None, description="All machines are on the same local network.")
    rdzv_backend: str | None = Field(None, description="Rendezvous backend (static, c10d, ...).")
    max_restarts: Int | None = Field(None, ge=0, description="Worker restarts before the job fails.")
    monitor_interval: Float | None = Field(None, gt=0, description="Seconds between worker health checks.")
    use_deepspeed: bool | None = Field(None, description="Launch with DeepSpeed.")
    use_fsdp: bool | None = Field(None, description="Launch with FSDP.")
    use_megatron_lm: bool | None = Field(None, description="Launch with Megatron-LM.")
    zero_stage: Literal[0, 1, 2, 3] | None = Field(None, description="DeepSpeed ZeRO stage.")
    num_cpu_threads_per_process: Int | None = Field(None, ge=1, description="CPU threads per process.")
    enable_cpu_affinity: bool | None = Field(None, description="Pin processes to CPU cores (NVIDIA only).")
    quiet: bool | None = Field(None, description="Less launcher output.")

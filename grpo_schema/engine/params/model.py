"""The policy model: which checkpoint, and how it is loaded."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float, JsonDict


class ModelParams(AreaParams):
    area = "model"
    title = "Model"
    summary = "The model to train and how it is loaded."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "dtype": {
            "auto": "The dtype stored in the checkpoint's config.",
            "bfloat16": "16-bit brain float: float32's range at half the memory; needs Ampere or newer GPUs.",
            "float16": "16-bit float: half the memory, small range (risk of overflow without loss scaling).",
            "float32": "Full precision: the most memory, the safest numerics.",
        }
    }

    model_name_or_path: str | None = Field(
        None,
        examples=["Qwen/Qwen2.5-0.5B-Instruct"],
        description="Hub id or local path of the model to train. The `trl grpo` script requires it.",
    )
    model_revision: str | None = Field(
        "main", description="Branch, tag or commit of the model on the Hub; null means the default branch."
    )
    dtype: Literal["auto", "bfloat16", "float16", "float32"] | None = Field(
        "float32",
        description="Data type the weights are loaded in. 'auto' takes the checkpoint's. (Formerly torch_dtype.)",
    )
    attn_implementation: str | None = Field(
        None,
        examples=["flash_attention_2", "sdpa"],
        description="Attention backend, e.g. 'eager', 'sdpa', 'flash_attention_2' or a kernels-hub id.",
    )
    model_init_kwargs: JsonDict | None = Field(
        None,
        examples=[{"use_kernels": True}],
        description="Extra from_pretrained keyword arguments for the policy (and reference) model; they win over "
        "model_revision, dtype and attn_implementation. A JSON object string works too.",
    )
    trust_remote_code: bool = Field(
        False, description="Run model code shipped with the checkpoint. Only for checkpoints you trust."
    )
    router_aux_loss_coef: Float | None = Field(
        None,
        examples=[0.001],
        ge=0,
        description="Mixture-of-experts only: weight of the router load-balancing loss. null takes the model "
        "config's value; a non-zero value on a dense model is an error in TRL.",
    )
    disable_dropout: bool = Field(False, description="Turn off dropout in the policy (and reference) model.")
    cast_lm_head_to_fp32: bool = Field(
        False, description="Compute the LM head in float32 for more precise log-probs under bf16/fp16."
    )
    use_cache: bool = Field(False, description="Use the KV cache in training forward passes (not generation).")

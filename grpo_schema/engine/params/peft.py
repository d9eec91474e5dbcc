"""LoRA adapters (PEFT) and bitsandbytes quantization of the base model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float, Int, StrList

TASK_TYPES = ("CAUSAL_LM", "SEQ_CLS", "SEQ_2_SEQ_LM", "TOKEN_CLS", "QUESTION_ANS", "FEATURE_EXTRACTION")


class PeftParams(AreaParams):
    area = "peft"
    title = "LoRA (PEFT)"
    summary = "Train low-rank adapters instead of all weights (needs the peft package)."

    use_peft: bool = Field(False, description="Train LoRA adapters instead of the full model.")
    lora_r: Int = Field(16, ge=1, description="LoRA rank.")
    lora_alpha: Int = Field(32, ge=1, description="LoRA scaling numerator (scale = lora_alpha / lora_r).")
    lora_dropout: Float = Field(0.05, ge=0, lt=1, description="Dropout on the LoRA input, in [0, 1).")
    lora_target_modules: StrList | str | None = Field(
        None,
        examples=[["q_proj", "v_proj"], "all-linear"],
        description="Module names (or one regex / 'all-linear') to adapt. null uses PEFT's default for the "
        "architecture.",
    )
    lora_target_parameters: StrList | None = Field(
        None, description="Parameter names to adapt directly (e.g. MoE expert weights)."
    )
    lora_modules_to_save: StrList | None = Field(
        None, description="Modules trained in full and saved with the adapter (e.g. lm_head)."
    )
    lora_task_type: Literal[TASK_TYPES] = Field(  # type: ignore[valid-type]
        "CAUSAL_LM", description="PEFT task type; GRPO trains causal language models."
    )
    use_rslora: bool = Field(False, description="Rank-stabilised LoRA: scale by lora_alpha / sqrt(lora_r).")
    use_dora: bool = Field(False, description="Weight-decomposed LoRA (DoRA).")


class QuantizationParams(AreaParams):
    area = "quantization"
    title = "Quantization"
    summary = "Load the base model in 8 or 4 bits with bitsandbytes (QLoRA); needs use_peft."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "bnb_4bit_quant_type": {
            "nf4": "4-bit NormalFloat, suited to normally distributed weights (QLoRA's choice).",
            "fp4": "Plain 4-bit float.",
        }
    }

    load_in_8bit: bool = Field(False, description="Load the base model in 8-bit. Not with load_in_4bit.")
    load_in_4bit: bool = Field(False, description="Load the base model in 4-bit (QLoRA). Not with load_in_8bit.")
    bnb_4bit_quant_type: Literal["fp4", "nf4"] = Field("nf4", description="4-bit data type.")
    use_bnb_nested_quant: bool = Field(False, description="Quantize the quantization constants too.")
    bnb_4bit_quant_storage: str | None = Field(
        None, description="Storage dtype of the packed 4-bit weights (e.g. 'bfloat16' for FSDP)."
    )

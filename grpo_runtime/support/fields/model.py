"""What grpo_runtime does with the fields of loading the model: weights, dtype, attention, LoRA / quantisation, precision, memory and speed switches."""

from __future__ import annotations

from grpo_runtime.common import Setting, Support, honoured, ignored, installed, refuse_if, warn_if, warned
from grpo_runtime.model.attention import fallback_warning
from grpo_runtime.support.fields.shared import only_with, sharded_weights
from grpo_schema.engine.codes import U_NO_EFFECT, U_NOTHING_TO_TRAIN, U_PACKAGE, U_SHARDING, U_SPEED_ONLY


def _nothing_to_train(s: Setting) -> str:
    """A file without a model holds GRPOConfig arguments for a script; say what a run still needs."""
    c = s.config
    missing = ["model_name_or_path"]
    if not (c.dataset_name or c.datasets or getattr(c, "dataset_mixture", None)):
        missing.append("a dataset (dataset_name or datasets)")
    if not (c.reward_funcs or c.reward_model_name_or_path):
        missing.append("reward_funcs")
    needs = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
    return (
        f"the file sets no {needs}: it holds GRPOConfig settings for a Python script, and a run started from "
        "it has no model to train"
    )


def _peft(s: Setting) -> bool:
    return bool(s.config.use_peft)


def attention_fallback(s: Setting) -> str | None:
    return fallback_warning(s.config)


QUANTISED = (
    "model.quantization_config: bitsandbytes' quantised base weights (QLoRA), as `trl grpo` builds them; "
    "LoRA weights in bf16 as in TRL (the validator requires use_peft: GRPO-M002)"
)


def _quantised(s: Setting) -> bool:
    return bool(s.config.load_in_4bit or s.config.load_in_8bit)


QUANTISED_LIMITS = (
    refuse_if(
        lambda s: _quantised(s) and not installed("bitsandbytes"),
        "quantised loading needs the bitsandbytes package, which is not installed here",
        "pip install 'bitsandbytes>=0.48' (its wheels run on CPUs too)",
        U_PACKAGE,
    ),
    refuse_if(
        lambda s: _quantised(s) and sharded_weights(s),
        "quantised weights are not sharded by grpo_runtime (FSDP, ZeRO-3)",
        "use DDP or ZeRO-1/2",
        U_SHARDING,
    ),
)


LORA = "peft LoraConfig in model.py (with use_peft; TRL ignores it too while use_peft is off)"


SPEED = "changes only speed or memory, not the numbers"


FIELDS: dict[str, Support] = {
    "activation_checkpointing": honoured("model.load_policy (off while sampling or scoring without gradients)"),
    "activation_checkpointing_kwargs": honoured("model.enable_checkpointing"),
    "attn_implementation": honoured(
        "model.load_kwargs (from_pretrained, the policy and a reward model; attention.py replaces a kernel whose "
        "package is missing by sdpa)",
        warn_if(
            lambda s: (
                "attn_implementation" not in (s.config.model_init_kwargs or {}) and attention_fallback(s) is not None
            ),
            lambda s: attention_fallback(s),
            U_SPEED_ONLY,
        ),
    ),
    "bf16": honoured("precision.mixed_precision (accelerate autocast)"),
    "bf16_full_eval": ignored(
        "HF casts the model for evaluations outside training only; during training TRL 1.16 ignores it too"
    ),
    "bnb_4bit_quant_storage": honoured("model.quantization_config (BitsAndBytesConfig); with load_in_4bit"),
    "bnb_4bit_quant_type": honoured("model.quantization_config (BitsAndBytesConfig); with load_in_4bit"),
    "cast_lm_head_to_fp32": honoured(
        "model.cast_lm_head_to_fp32 (a LoRA adapter on lm_head, which it could not "
        "keep in fp32, is refused by the validator: GRPO-M007)"
    ),
    "disable_dropout": honoured("model.disable_dropout"),
    "dtype": honoured("model.load_kwargs (from_pretrained: the policy, the reference and a reward model)"),
    "fp16": honoured("precision.mixed_precision (accelerate autocast and loss scaling)"),
    "fp16_full_eval": ignored(
        "HF casts the model for evaluations outside training only; during training TRL 1.16 ignores it too"
    ),
    "gradient_checkpointing": honoured("model.checkpointing_settings (alias of activation_checkpointing)"),
    "gradient_checkpointing_kwargs": honoured("model.checkpointing_settings"),
    "liger_kernel_config": ignored(only_with("use_liger_kernel", "which is warned about")),
    "load_in_4bit": honoured(QUANTISED, *QUANTISED_LIMITS),
    "load_in_8bit": honoured(QUANTISED, *QUANTISED_LIMITS),
    "lora_alpha": honoured(LORA),
    "lora_dropout": honoured(LORA),
    "lora_modules_to_save": honoured(LORA),
    "lora_r": honoured(LORA),
    "lora_target_modules": honoured(LORA),
    "lora_target_parameters": honoured(LORA),
    "lora_task_type": honoured(LORA),
    "model_init_kwargs": honoured(
        "model.load_kwargs (win over the named fields; the reward model's too, as in trl grpo)",
        warn_if(
            lambda s: "attn_implementation" in (s.config.model_init_kwargs or {}) and attention_fallback(s) is not None,
            lambda s: attention_fallback(s),
            U_SPEED_ONLY,
        ),
    ),
    "model_name_or_path": honoured(
        "model.py, the tokenizer and the reference model",
        refuse_if(
            lambda s: s.config.model_name_or_path is None,
            _nothing_to_train,
            "add model_name_or_path (a local path or Hub id), and the dataset and reward_funcs if missing, to "
            "the file or pass them with --set KEY=VALUE",
            U_NOTHING_TO_TRAIN,
        ),
    ),
    "model_revision": honoured("model.load_kwargs, model.load_tokenizer"),
    "router_aux_loss_coef": honoured("step.micro_step_loss (MoE models; refused on dense ones when loaded)"),
    "tf32": honoured(
        "setup.seed_everything (torch's TF32 switches; CUDA Ampere or newer only)",
        warn_if(
            lambda s: s.config.tf32 is not None and s.config.use_cpu,
            "TF32 is a CUDA matmul mode; it cannot change a run on the CPU",
            U_NO_EFFECT,
        ),
    ),
    "torch_compile": warned("the model runs eagerly: " + SPEED, U_SPEED_ONLY),
    "torch_compile_backend": ignored(only_with("torch_compile", "which is warned about")),
    "torch_compile_mode": ignored(only_with("torch_compile", "which is warned about")),
    "torch_empty_cache_steps": warned("the accelerator's cache is not emptied every N steps: " + SPEED, U_SPEED_ONLY),
    "trust_remote_code": honoured("model.load_kwargs, model.load_tokenizer"),
    "use_bnb_nested_quant": honoured("model.quantization_config (BitsAndBytesConfig); with load_in_4bit"),
    "use_cache": honoured("model.load_policy (the model config's use_cache, saved with the model, as TRL)"),
    "use_cpu": honoured("setup.new_accelerator"),
    "use_dora": honoured(LORA),
    "use_liger_kernel": warned("no Liger kernels are applied: " + SPEED, U_SPEED_ONLY),
    "use_peft": honoured(
        "model.wrap_lora",
        refuse_if(
            lambda s: _peft(s) and not installed("peft"),
            "use_peft needs the peft package, which is not installed",
            "pip install 'grpo-config[peft]'",
            U_PACKAGE,
        ),
    ),
    "use_rslora": honoured(LORA),
}

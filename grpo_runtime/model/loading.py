"""Loading the policy, its tokenizer and the reference model from the validated config.

* the policy is `AutoModelForCausalLM.from_pretrained(model_name_or_path)` with `model_revision`, `dtype`,
  `attn_implementation`, `trust_remote_code` and `model_init_kwargs` (which win), like `trl grpo`;
* the tokenizer pads on the left and uses EOS as pad when it has no pad token; the pad id is copied to the model;
* `use_peft` wraps the policy in a LoRA adapter (needs the `peft` package); the reference policy is then the
  model with the adapter disabled;
* otherwise, with `beta != 0`, the reference is a second copy loaded from the same checkpoint on disk, in eval
  mode, and `sync_ref_model` mixes the policy into it every `ref_model_sync_steps` optimizer steps; it is loaded
  as the policy is (under ZeRO-3 partitioned by zero.Init; distributed.sharding.prepare_reference places it);
* `neftune_noise_alpha` adds uniform noise to the input embeddings of every forward pass in train mode, as the
  HF trainer does for TRL: sampling and scoring too (the model stays in train mode), never in evaluation;
* 4/8-bit quantisation (bitsandbytes) is not supported;
* a vision-language checkpoint is refused before it loads (model/modality.py).
"""

from __future__ import annotations

import contextlib

import torch

from grpo_runtime.common import CannotRun
from grpo_runtime.model.attention import loadable
from grpo_runtime.model.modality import refuse_vision_language


def load_kwargs(config) -> dict:
    kwargs = dict(
        revision=config.model_revision,
        trust_remote_code=config.trust_remote_code,
        attn_implementation=config.attn_implementation,
        dtype=config.dtype,
    )
    kwargs.update(config.model_init_kwargs or {})
    kwargs["attn_implementation"] = loadable(kwargs.get("attn_implementation"))  # warned about (attention.py)
    if isinstance(kwargs.get("dtype"), str) and kwargs["dtype"] != "auto":
        kwargs["dtype"] = getattr(torch, kwargs["dtype"])
    return kwargs


def load_tokenizer(config):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(
        config.model_name_or_path,
        revision=config.model_revision,
        trust_remote_code=config.trust_remote_code,
        padding_side="left",
        truncation_side="left",
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def disable_dropout(model) -> None:
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0


def load_policy(config, tokenizer):
    """The trainable model, with the tokenizer's pad id, dropout and gradient checkpointing set as configured."""
    from transformers import AutoModelForCausalLM

    if config.cast_lm_head_to_fp32 and config.use_peft and "lm_head" in (config.lora_target_modules or []):
        raise CannotRun(
            "cast_lm_head_to_fp32 cannot keep lm_head in fp32 when LoRA adapts it; remove lm_head "
            "from lora_target_modules or set cast_lm_head_to_fp32: false"
        )
    kwargs = load_kwargs(config)
    quantization = quantization_config(config)
    if quantization is not None:
        if "quantization_config" in kwargs:
            raise CannotRun(
                "quantization_config is set in model_init_kwargs and by load_in_4bit / load_in_8bit; keep one of them"
            )
        kwargs["quantization_config"] = quantization
    refuse_vision_language(config)
    model = AutoModelForCausalLM.from_pretrained(config.model_name_or_path, **kwargs)
    model.config.get_text_config().pad_token_id = tokenizer.pad_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.config.use_cache = config.use_cache  # training forwards; generate keeps its own cache setting (as TRL)
    if config.neftune_noise_alpha is not None:
        add_neftune_noise(model, config.neftune_noise_alpha)
    if config.disable_dropout:
        disable_dropout(model)
    if config.cast_lm_head_to_fp32:
        cast_lm_head_to_fp32(model)
    if config.use_peft:
        model = wrap_lora(model, config)
        if quantization is not None:
            adapters_in_bf16(model)
    enabled, kwargs = checkpointing_settings(config)
    if enabled:
        model.config.use_cache = False
        enable_checkpointing(model, kwargs)
        if config.use_peft:
            model.enable_input_require_grads()  # frozen embeddings would otherwise cut the checkpointed graph
    return model


def quantization_config(config):
    """QLoRA's quantised base weights (bitsandbytes), as TRL's `trl grpo` builds them: 4-bit with the model's dtype
    as the compute dtype, `bnb_4bit_quant_type`, nested quantisation and the storage dtype; or 8-bit. None when
    neither is asked for."""
    if not (config.load_in_4bit or config.load_in_8bit):
        return None
    from transformers import BitsAndBytesConfig

    if config.load_in_8bit:
        return BitsAndBytesConfig(load_in_8bit=True)
    compute = config.dtype if config.dtype not in (None, "auto") else None
    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_compute_dtype=compute,
        bnb_4bit_quant_type=config.bnb_4bit_quant_type,
        bnb_4bit_use_double_quant=config.use_bnb_nested_quant,
        bnb_4bit_quant_storage=config.bnb_4bit_quant_storage,
    )


def adapters_in_bf16(model) -> None:
    """On a quantised base, TRL keeps the LoRA weights in bf16 (the QLoRA paper's choice), except DoRA's magnitude
    vector, whose small updates bf16 would round away."""
    for name, param in model.named_parameters():
        if param.requires_grad and "lora_magnitude_vector" not in name:
            param.data = param.data.to(torch.bfloat16)


def add_neftune_noise(model, alpha: float) -> None:
    """NEFTune: on each forward of the input embeddings in train mode, add noise drawn uniformly from
    [-b, b] with b = alpha / sqrt(sequence length * hidden size), from the global torch RNG."""
    embeddings = model.get_input_embeddings()
    embeddings.neftune_noise_alpha = alpha  # read by prefill.stochastic_forward: the forward is not deterministic

    def noisy(module, args, output):
        if not module.training:
            return output
        bound = alpha / torch.sqrt(torch.tensor(output.size(1) * output.size(2)))
        return output + torch.zeros_like(output).uniform_(-bound, bound)

    embeddings.register_forward_hook(noisy)


def checkpointing_settings(config) -> tuple[bool, dict | None]:
    """activation_checkpointing(_kwargs), falling back to their deprecated gradient_checkpointing aliases (which
    TRL defaults to on) when unset, as TrainingArguments resolves them."""
    enabled = config.activation_checkpointing
    kwargs = config.activation_checkpointing_kwargs
    enabled = config.gradient_checkpointing if enabled is None else enabled
    kwargs = config.gradient_checkpointing_kwargs if kwargs is None else kwargs
    return bool(enabled), kwargs


def enable_checkpointing(model, kwargs: dict | None) -> None:
    options = dict(kwargs or {})
    every_n_layers, offload = options.pop("every_n_layers", 1), options.pop("offload", False)
    if hasattr(model, "activation_checkpointing_enable"):  # the name since transformers 5.20
        model.activation_checkpointing_enable(
            activation_checkpointing_kwargs=options or None, every_n_layers=every_n_layers, offload=offload
        )
    else:  # earlier transformers 5 (the vLLM extra pins < 5.20)
        model.gradient_checkpointing_enable(
            gradient_checkpointing_kwargs=options or None, every_n_layers=every_n_layers, offload=offload
        )


def disable_checkpointing(model) -> None:
    if hasattr(model, "activation_checkpointing_disable"):
        model.activation_checkpointing_disable()
    else:
        model.gradient_checkpointing_disable()


def is_checkpointing(model) -> bool:
    if hasattr(model, "activation_checkpointing_enable"):
        return bool(getattr(model, "is_activation_checkpointing", False))
    return bool(getattr(model, "is_gradient_checkpointing", False))


def wrap_lora(model, config):
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as error:
        raise CannotRun("use_peft: true needs the peft package (pip install 'grpo-config[peft]')") from error
    extra = {}
    if config.lora_target_parameters is not None:
        extra["target_parameters"] = config.lora_target_parameters
    lora = LoraConfig(
        task_type=config.lora_task_type,
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=config.lora_target_modules,
        bias="none",
        use_rslora=config.use_rslora,
        use_dora=config.use_dora,
        modules_to_save=config.lora_modules_to_save,
        **extra,
    )
    return get_peft_model(model, lora)


def router_loss_coefficient(config, model) -> float:
    """Weight of the MoE load-balancing loss: `router_aux_loss_coef`, else the model config's own value (TRL 1.16).
    Dense models have none; asking for one on a dense model is an error."""
    text_config = model.config.get_text_config()
    if not hasattr(text_config, "output_router_logits"):
        if config.router_aux_loss_coef:
            raise CannotRun(
                f"router_aux_loss_coef is {config.router_aux_loss_coef} but "
                f"{type(model).__name__} is not a Mixture-of-Experts model with router logits"
            )
        return 0.0
    if config.router_aux_loss_coef is not None:
        return config.router_aux_loss_coef
    return getattr(text_config, "router_aux_loss_coef", 0.0) or 0.0  # a model config that declares none: off


def cast_lm_head_to_fp32(model) -> None:
    """cast_lm_head_to_fp32: keep the output projection in fp32 and run it outside autocast, so the logits (and
    log-probs) of a bf16/fp16 model are computed in full precision. Tied input embeddings keep their dtype."""
    head = model.get_output_embeddings()
    embeddings = model.get_input_embeddings()
    original_dtype = head.weight.dtype
    head.float()

    def forward(hidden_states):
        with torch.autocast(device_type=hidden_states.device.type, enabled=False):
            bias = None if head.bias is None else head.bias.float()
            return torch.nn.functional.linear(hidden_states.float(), head.weight.float(), bias)

    head.forward = forward
    head.grpo_fp32_head = True  # the chunked head (training/lm_head.py) reads it: project in fp32 too
    if embeddings is not None and embeddings.weight is head.weight:
        embeddings.register_forward_hook(lambda module, args, output: output.to(original_dtype))


def load_reference(config, policy):
    """The frozen reference policy when the KL term is on: a fresh load of the checkpoint, never a copy of the
    in-memory policy. With PEFT there is none: the adapter is disabled instead (see `reference_context`)."""
    from transformers import AutoModelForCausalLM

    if config.beta == 0.0 or config.use_peft:
        return None
    kwargs = load_kwargs(config)
    kwargs.setdefault("dtype", policy.dtype)
    reference = AutoModelForCausalLM.from_pretrained(config.model_name_or_path, **kwargs)
    if config.disable_dropout:
        disable_dropout(reference)
    if config.cast_lm_head_to_fp32:
        cast_lm_head_to_fp32(reference)
    reference.requires_grad_(False)
    return reference.eval()


def reference_context(policy, reference):
    """(model to score the reference log-probs with, context to enter while doing so)."""
    if reference is not None:
        return reference, contextlib.nullcontext()
    return policy, policy.disable_adapter()


@torch.no_grad()
def mix_into_reference(policy, reference, alpha: float) -> None:
    """sync_ref_model: theta_ref <- alpha * theta + (1 - alpha) * theta_ref, parameter by parameter (every process
    calls this: sharded parameters are gathered, see sharding.parameter_pairs)."""
    from grpo_runtime.distributed.sharding import parameter_pairs

    for ref_param, param in parameter_pairs(reference, policy):
        ref_param.mul_(1.0 - alpha).add_(param.detach().to(ref_param.dtype), alpha=alpha)

"""A case's models, built locally (random init, a Llama architecture) and set up as the runtime sets up its own:
the policy (LoRA and activation checkpointing through model.loading) and the reference beside it."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import torch


def shape_of(case: dict) -> tuple[int, int, int, int, int, int]:
    """The model's size as build takes it: hidden, layers, intermediate, heads, kv_heads, vocab."""
    return (case["hidden"], case["layers"], case["intermediate"], case["heads"], case["kv_heads"], case["vocab"])


def build(
    hidden: int,
    layers: int,
    intermediate: int,
    heads: int,
    kv_heads: int,
    vocab: int,
    device: str,
    dtype: torch.dtype,
    attention: str = "sdpa",
):
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        attn_implementation=attention,
    )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=dtype).to(device)
    model.config.use_cache = False
    return model


def policy(case: dict, device: str, dtype: torch.dtype):
    """The trained model in train mode: under ZeRO-3 partitioned as it is built (zero.Init), as from_pretrained is;
    wrapped with the case's adapters and checkpointed when the case asks."""
    model = build(*shape_of(case), device, dtype, case.get("attention", "sdpa"))
    if case.get("lora"):
        model = lora_wrapped(model, case["lora"])
    if case.get("checkpointing"):
        checkpointed(model, bool(case.get("lora")))
    model.train()
    return model


def reference(case: dict, model, device: str, dtype: torch.dtype):
    """The model that scores the old and reference log-probs, and the context it scores in: none with beta 0 (TRL's
    default: no reference and no log-prob pass), the policy with its adapters disabled under LoRA
    (model.loading.reference_context), else a second copy in eval mode."""
    if not case.get("reference", True):
        return None, contextlib.nullcontext
    if case.get("lora"):
        return model, model.disable_adapter
    return build(*shape_of(case), device, dtype, case.get("attention", "sdpa")).eval(), contextlib.nullcontext


def lora_wrapped(model, lora: dict):
    """The policy wrapped as the runtime wraps it (model.loading.wrap_lora), with TRL's LoRA defaults."""
    from grpo_runtime.model.loading import wrap_lora

    r = lora.get("r", 16)
    return wrap_lora(
        model,
        SimpleNamespace(
            lora_task_type="CAUSAL_LM",
            lora_r=r,
            lora_alpha=lora.get("alpha", 2 * r),
            lora_dropout=lora.get("dropout", 0.05),
            lora_target_modules=lora.get("targets"),
            use_rslora=False,
            use_dora=False,
            lora_modules_to_save=None,
            lora_target_parameters=None,
        ),
    )


def checkpointed(model, lora: bool) -> None:
    """Activation checkpointing as the runtime's load_policy turns it on (model.loading.enable_checkpointing with
    transformers' defaults; under LoRA the embeddings' output is made to require a gradient, or the frozen
    embeddings would cut the checkpointed graph)."""
    from grpo_runtime.model.loading import enable_checkpointing

    model.config.use_cache = False
    enable_checkpointing(model, None)
    if lora:
        model.enable_input_require_grads()

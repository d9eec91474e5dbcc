"""Model, PEFT and quantization."""

from __future__ import annotations

import re
from typing import Any, Iterator

from grpo_schema.engine.rules import Finding, RuleContext, explicitly_set, has_or_have, rule

_LORA = (
    "lora_r",
    "lora_alpha",
    "lora_dropout",
    "lora_target_modules",
    "lora_target_parameters",
    "lora_modules_to_save",
    "use_rslora",
    "use_dora",
)


@rule("GRPO-M001", "error", ("load_in_8bit", "load_in_4bit"))
def one_quantization(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """load_in_8bit and load_in_4bit cannot both be true."""
    if config.load_in_8bit and config.load_in_4bit:
        yield Finding(
            "load_in_8bit and load_in_4bit cannot both be true",
            ("load_in_4bit", "load_in_8bit"),
            hint="keep load_in_4bit for QLoRA",
        )


@rule("GRPO-M002", "error", ("load_in_8bit", "load_in_4bit", "use_peft"))
def quantized_model_needs_adapters(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A quantized model can only be trained through adapters.

    transformers refuses to train the quantized weights themselves; set use_peft: true (QLoRA).
    """
    if (config.load_in_8bit or config.load_in_4bit) and not config.use_peft:
        name = "load_in_4bit" if config.load_in_4bit else "load_in_8bit"
        yield Finding(
            f"{name} needs use_peft: true (quantized weights cannot be trained directly)",
            (name, "use_peft"),
            hint="set use_peft: true",
        )


@rule("GRPO-M003", "warning", _LORA + ("use_peft",))
def lora_settings_without_peft(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """LoRA settings are set while use_peft is false.

    Without use_peft the full model is trained and every lora_* setting is ignored.
    """
    names = [n for n in _LORA if n in ctx.explicit]
    if not config.use_peft and names:
        yield Finding(
            f"{', '.join(names)} {has_or_have(names)} no effect without use_peft",
            tuple(names) + ("use_peft",),
            hint="set use_peft: true to train LoRA adapters, or remove these keys",
        )


@rule("GRPO-M004", "error", ("model_init_kwargs", "load_in_8bit", "load_in_4bit"))
def one_quantization_config(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """model_init_kwargs carries a quantization_config while load_in_* is set.

    The script passes its own quantization config built from load_in_4bit/load_in_8bit; TRL refuses a second one.
    """
    if (config.load_in_8bit or config.load_in_4bit) and "quantization_config" in (config.model_init_kwargs or {}):
        yield Finding(
            "model_init_kwargs.quantization_config conflicts with load_in_4bit/load_in_8bit",
            ("model_init_kwargs",),
            hint="remove one of the two",
        )


@rule("GRPO-M005", "info", ("router_aux_loss_coef",))
def router_loss_needs_moe(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A non-zero router_aux_loss_coef needs a mixture-of-experts model.

    TRL 1.16 raises on a dense model (one without output_router_logits); this cannot be checked without the model.
    """
    if config.router_aux_loss_coef and explicitly_set(ctx, "router_aux_loss_coef"):
        yield Finding(
            f"router_aux_loss_coef ({config.router_aux_loss_coef:g}) only works with a mixture-of-experts model",
            ("router_aux_loss_coef",),
            hint="leave it null for dense models",
        )


@rule("GRPO-M006", "error", ("use_liger_kernel", "liger_kernel_config"))
def liger_fused_cross_entropy_off(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """liger_kernel_config.fused_linear_cross_entropy must stay off for GRPO.

    GRPO needs per-token log-probs, which the fused cross-entropy kernel does not return; TRL refuses it.
    """
    if (config.liger_kernel_config or {}).get("fused_linear_cross_entropy"):
        yield Finding(
            "liger_kernel_config.fused_linear_cross_entropy is true, which GRPO cannot use",
            ("liger_kernel_config",),
            hint="set fused_linear_cross_entropy: false",
        )


_OUTPUT_LAYER = "lm_head"


def _targets_output_layer(targets: Any) -> bool:
    """Whether PEFT would put an adapter on lm_head: a list entry names it (or ends in '.lm_head'); a single string
    is a regular expression matched against whole module names ('all-linear' leaves the output layer out)."""
    if isinstance(targets, str):
        if targets == "all-linear":
            return False
        try:
            return re.fullmatch(targets, _OUTPUT_LAYER) is not None
        except re.error:
            return False
    return any(t == _OUTPUT_LAYER or t.endswith("." + _OUTPUT_LAYER) for t in targets or ())


@rule("GRPO-M007", "error", ("use_peft", "lora_target_modules"))
def no_adapter_on_lm_head(config: Any, ctx: RuleContext) -> Iterator[Finding]:
    """A LoRA adapter on lm_head is refused by GRPOTrainer.

    GRPO computes log-probabilities from lm_head's weight directly, so an adapter there would never train;
    TRL 1.16 raises when the trainer is built. To train the output layer in full, list it in
    lora_modules_to_save instead.
    """
    if config.use_peft and _targets_output_layer(config.lora_target_modules):
        yield Finding(
            "lora_target_modules puts a LoRA adapter on lm_head, which GRPOTrainer refuses",
            ("lora_target_modules", "use_peft"),
            hint="remove lm_head from lora_target_modules (list it in lora_modules_to_save to train it in full)",
        )

"""What a decoder layer saves for its backward pass, tensor by tensor, per token: full fine-tuning, LoRA and QLoRA,
by attention implementation.

An inventory, not a fit: each term is a tensor autograd keeps (listed by walking the graph of a Llama layer's
forward with torch's saved-tensor hooks, transformers 5.23, peft 0.21, torch 2.13) and the totals are held to
grpo_runtime's measured step (tests/hardware/test_measured.py: full fine-tuning, LoRA with and without dropout and
with checkpointing, SDPA and eager attention, memprobe on CPU). a is the activations' dtype in bytes, h the hidden
size, q and kv the query and key/value widths, H the heads, T the sequence length, i the MLP's width.

- RMSNorm computes in fp32: its fp32 input copy (4h) and rsqrt (4) are kept whenever a gradient flows through it;
  the normalised value (a h) only when its weight trains (full fine-tuning), and its output (a h) only when a
  layer reading it saves its input.
- A linear layer saves its input only for its weight's gradient. A frozen base projection (LoRA, QLoRA: the
  weight is a parameter, not an activation; bitsandbytes' MatMul4Bit keeps only the quantised weight) saves
  nothing; the input gradient needs the weight alone. So under LoRA the MLP keeps gate's output (SiLU's input),
  SiLU's output and up's output (3 a i) but not down's input, unless down is adapted.
- peft's LoRA layer casts its input to the adapters' dtype, drops it out (`lora_dropout`; 0 is an identity), and
  runs A then B: A saves its (dropped, cast) input per adapted module, B saves A's r-wide output, dropout its mask
  (a bool on a GPU, torch's fused kernel; a noise tensor in the input's dtype on a CPU). Under bf16/fp16 autocast
  (both engines run the forward in accelerator.autocast()) A's matmul saves its own half-precision cast of the
  input. Only with no dropout and adapters in the activations' dtype (QLoRA's bf16 adapters, DeepSpeed's cast
  module, an fp32 run) does A save the very tensor the layer already holds. The adapters are fp32 otherwise:
  peft upcasts the adapters of a 16-bit base (autocast_adapter_dtype), except TRL 1.16 under ZeRO-3.
- Attention: SDPA with a padding mask (GRPO's prompts are left-padded) runs on repeated keys and values (no GQA
  with a mask) and saves q, k, v, its output (the same storage as o_proj's input), the fp32 log-sum-exp and the
  boolean mask converted to the compute dtype, T numbers per token per layer. Eager attention saves q, the
  repeated k and v, the fp32 softmax (H T per token) and, below fp32, its cast for the product with v; o_proj's
  input is its own tensor. Flash attention (2 and 3; flash-attn's FlashAttnVarlenFunc saves q, k, v, out_padded
  and softmax_lse) keeps no T x T mask and no repeated keys: transformers un-pads q, k, v into new tensors (k and
  v at their own width), and re-pads the output into the tensor o_proj reads. Not measurable on a CPU: documented
  arithmetic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from grpo_schema.engine.hardware.models import ModelFacts

if TYPE_CHECKING:
    from grpo_schema.engine.hardware.memory import Setup

DEFAULT_LORA_TARGETS = ("q_proj", "v_proj")  # PEFT's default for Llama/Qwen/Mistral families
ALL_LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
FP32 = 4


def lora_target_names(setup: Setup) -> tuple[str, ...]:
    targets = setup.lora_targets or DEFAULT_LORA_TARGETS
    return ALL_LINEAR if targets in (("all-linear",), ("all_linear",)) else targets


def attention_kind(name: str) -> str:
    """'flash' (flash_attention_2/3, kernels-community flash kernels, flex), 'eager', else 'sdpa'."""
    lowered = (name or "sdpa").lower()
    if "flash" in lowered or "flex" in lowered:
        return "flash"
    return "eager" if lowered == "eager" else "sdpa"


def autocast_forward(s: Setup) -> bool:
    """The forward runs under bf16/fp16 autocast: accelerate's mixed precision, which DeepSpeed replaces by casting
    the module itself."""
    return (s.mixed_precision or s.autocast) and s.compute_bytes == 2 and not s.deepspeed


def lora_adapter_bytes(s: Setup) -> int:
    """The adapters' dtype: bf16 on a quantised base (both engines cast them), the module's own under DeepSpeed
    (its bf16 engine casts the module; TRL 1.16 also passes autocast_adapter_dtype=False under ZeRO-3), else fp32
    (peft upcasts the adapters of a 16-bit base)."""
    if s.quantization:
        return 2
    if s.deepspeed and s.compute_bytes == 2:
        return 2
    return FP32


def lora_module_bytes(s: Setup, width: int) -> float:
    """Per token, what one adapted projection with `width` inputs saves besides the base layer."""
    saved = s.compute_bytes if autocast_forward(s) else lora_adapter_bytes(s)
    return (saved * width if lora_copies_input(s) else 0) + dropout_mask_bytes(s, width) + saved * s.lora_r


def dropout_mask_bytes(s: Setup, width: int) -> float:
    """lora_dropout's mask over `width` numbers: a bool on a GPU (torch's fused kernel), on a CPU the noise tensor
    in the input's dtype; none without dropout."""
    if s.lora_dropout <= 0:
        return 0
    return width * (1 if s.device == "gpu" else lora_adapter_bytes(s))


def lora_copies_input(s: Setup) -> bool:
    """Each adapted module saves its own copy of its input (dropped out, or cast to the adapters' dtype)."""
    return s.lora_dropout > 0 or lora_adapter_bytes(s) != s.compute_bytes


def adapted_inputs(model: ModelFacts, s: Setup) -> dict[str, int]:
    """The adapted projections of one layer and their input widths (MLP projections once per routed expert)."""
    if not s.use_peft:
        return {}
    shapes = model.linear_shapes()
    experts = model.experts_per_token or 1
    return {
        name: shapes[name][0] * (experts if name in ("gate_proj", "up_proj", "down_proj") else 1)
        for name in lora_target_names(s)
        if name in shapes
    }


def layer_bytes_per_token(model: ModelFacts, s: Setup) -> float:
    """Bytes one decoder layer saves for backward, per token."""
    a, h, i = s.compute_bytes, model.hidden_size, model.intermediate_size * (model.experts_per_token or 1)
    full = not s.use_peft
    adapted = adapted_inputs(model, s)
    shared = bool(adapted) and not lora_copies_input(s)

    def input_saved(*readers: str) -> bool:  # a tensor is kept when a reader saves it as its input
        return full or (shared and any(name in adapted for name in readers))

    norm = FP32 * h + FP32 + (a * h if full else 0)
    total = model.norms_per_layer * norm
    total += a * h * (input_saved("q_proj", "k_proj", "v_proj") + input_saved("gate_proj", "up_proj"))
    total += attention_bytes(model, s, o_input_saved=input_saved("o_proj"))
    total += 3 * a * i + a * i * input_saved("down_proj")
    return total + sum(lora_module_bytes(s, width) for width in adapted.values())


def attention_bytes(model: ModelFacts, s: Setup, o_input_saved: bool) -> float:
    a, q, kv, H, T = s.compute_bytes, model.q_width, model.kv_width, model.num_heads, s.sequence_length
    o_input = a * q if o_input_saved else 0
    kind = attention_kind(s.attention)
    if kind == "flash":
        return a * (2 * q + 2 * kv) + FP32 * H + o_input
    repeated = max(q, kv)  # keys and values repeated to every query head
    if kind == "eager":
        probabilities = FP32 * H * T + (a * H * T if a < FP32 else 0)
        return a * (q + 2 * repeated) + probabilities + o_input
    return a * (2 * q + 2 * repeated) + FP32 * H + a * T


def final_bytes_per_token(model: ModelFacts, s: Setup) -> float:
    """The final norm (fp32 input, rsqrt, the normalised value when its weight trains) and the trunk's output."""
    a, h = s.compute_bytes, model.hidden_size
    return FP32 * h + FP32 + (a * h if not s.use_peft else 0) + a * h


def trunk_bytes(model: ModelFacts, s: Setup, tokens: int, head: float = 0.0) -> float:
    """The decoder's saved tensors over `tokens` tokens at the training step's peak. Without checkpointing: every
    layer's (under LoRA the first layer's input norm keeps nothing: the frozen embeddings' output needs no
    gradient) and the final norm's. Checkpointed: each layer's input and the final norm's tensors, and in the
    backward one layer recomputed with its gradients, which comes after the LM head's backward has freed its
    buffers (`head` bytes): only what exceeds them adds to the peak."""
    a, h = s.compute_bytes, model.hidden_size
    final = tokens * final_bytes_per_token(model, s)
    if s.activation_checkpointing:
        return model.num_layers * tokens * a * h + final + max(recompute_bytes(model, s, tokens) - head, 0.0)
    layer = tokens * layer_bytes_per_token(model, s)
    return model.num_layers * layer + final - tokens * first_layer_unsaved(model, s)


def recompute_bytes(model: ModelFacts, s: Setup, tokens: int) -> float:
    """A checkpointed layer in the backward: its saved tensors, recomputed, and the gradients alive while its
    backward runs (the MLP's three intermediate-wide ones: the product's, SiLU's output's and up's output's, and
    the hidden state's coming in and going out)."""
    a, h, i = s.compute_bytes, model.hidden_size, model.intermediate_size * (model.experts_per_token or 1)
    return tokens * (layer_bytes_per_token(model, s) + 3 * a * i + 2 * a * h)


def first_layer_unsaved(model: ModelFacts, s: Setup) -> float:
    """Per token, what the first layer does not keep under LoRA (without checkpointing): the frozen embeddings'
    output needs no gradient, so up to the first adapted projection nothing does: the norms, attention and MLP
    before it save nothing, and the adapted projections reading such inputs keep no dropout mask."""
    if not s.use_peft:
        return 0.0
    a, h, i = s.compute_bytes, model.hidden_size, model.intermediate_size * (model.experts_per_token or 1)
    adapted = adapted_inputs(model, s)
    attention = attention_bytes(model, s, o_input_saved=False)
    if attention_kind(s.attention) == "sdpa" and "o_proj" in adapted and not lora_copies_input(s):
        attention -= a * model.q_width  # SDPA's output is o_proj's input, which its adapter still keeps
    blocks = (
        (("q_proj", "k_proj", "v_proj"), FP32 * h + FP32),
        (("o_proj",), attention),
        (("gate_proj", "up_proj"), FP32 * h + FP32),
        (("down_proj",), 3 * a * i),
    )
    unsaved = 0.0
    for readers, before in blocks:
        unsaved += before + sum(dropout_mask_bytes(s, adapted[name]) for name in readers if name in adapted)
        if any(name in adapted for name in readers):
            break
    return unsaved

"""The LM head's memory as each engine scores completions: TRL 1.16's fused, chunked head (a [4096 tokens, 32768
vocab] tile in the compute dtype) or grpo_runtime's chunked head (fp32 [chunk_tokens, vocab] tiles), and the full
logits where grpo_runtime cannot chunk; neither engine's chunked head ever holds the full logits (docs/planner.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grpo_schema.engine.hardware.activations import lora_target_names
from grpo_schema.engine.hardware.models import ModelFacts

if TYPE_CHECKING:
    from grpo_schema.engine.hardware.memory import Setup

# The LM heads' tiles: the one place the planner states them (docs/planner.md).
# TRL 1.16 (trl.trainer.utils._CHUNKED_LOGPROB_CHUNK_SIZE, trl.kernels.chunked_logprob.TOKEN_CHUNK_SIZE): the
# projection runs on [min(N, 4096), 32768] tiles in the compute dtype; fp32 accumulators hold the gradients.
TRL_TOKEN_TILE = 4096
TRL_VOCAB_TILE = 32768
# grpo_runtime (grpo_runtime.training.lm_head.TILE_ELEMENTS): one fp32 [chunk_tokens, vocab] tile of 2**23
# elements; forward and backward each hold 2 such tiles at once (the logits and their softmax, measured with
# memprobe: tests/hardware/test_measured.py).
RUNTIME_TILE_ELEMENTS = 1 << 23
RUNTIME_FORWARD_TILES = 2
RUNTIME_BACKWARD_TILES = 2


# When grpo_runtime scores through the full [rows, C + 1, V] logits instead of its chunked head: the planner's copy
# of grpo_runtime.training.logprobs._chunkable's rules that a config can express (grpo_schema never imports the
# runtime; tests/hardware/test_runtime_head_rule.py builds each case and holds the two equal). Each is
# (rule, reason). The chunked head runs under DDP, FSDP2 and ZeRO-3, and for LoRA on lm_head without dropout.
# Not modelled (no config key says them): a quantised lm_head, DoRA on lm_head, models that rescale their logits.
RUNTIME_FULL_LOGITS = (
    (
        "lora_head_dropout",
        "LoRA on lm_head with lora_dropout > 0: peft computes x @ W.T + B(A(dropout(x))), "
        "which no single weight reproduces",
    ),
    ("adapted_sharded_head", "LoRA on lm_head under ZeRO-3 or FSDP"),
)


def runtime_full_logits(s: Setup, adapters: bool = True) -> str | None:
    """The rule by which grpo_runtime takes the full-logits path for this setup, or None (its chunked head).
    `adapters`: False for the reference pass of a LoRA run, which disables the adapters: peft then calls lm_head's
    base layer alone, and the chunked head runs on it."""
    head_adapted = s.use_peft and adapters and "lm_head" in lora_target_names(s)
    holds = {
        "lora_head_dropout": head_adapted and s.lora_dropout > 0,
        "adapted_sharded_head": head_adapted and s.strategy in ("zero3", "fsdp"),
    }
    return next((rule for rule, _ in RUNTIME_FULL_LOGITS if holds[rule]), None)


def runtime_chunk_tokens(vocab: int) -> int:
    """Tokens in one of grpo_runtime's head chunks (as grpo_runtime.training.lm_head.tokens_per_chunk)."""
    return max(1, RUNTIME_TILE_ELEMENTS // vocab)


def head_tokens(s: Setup, rows: int) -> int:
    """Positions scored by the head: the completion tokens of `rows` sequences (TRL scores only labelled ones)."""
    return rows * s.completion_length


def logits(model: ModelFacts, s: Setup, rows: int, grad: bool, adapters: bool = True) -> float:
    """The LM head's transient memory over `rows` sequences: never the full [rows, C, V] logits (docs/planner.md).

    TRL 1.16: one [min(N, 4096), 32768] tile in the compute dtype, the hidden states of the scored positions, and
    in training fp32 accumulators for their gradient ([N, H]) and, when the head is trained, the vocabulary
    matrix's ([V, H]) plus its cast back. grpo_runtime: 2 fp32 [chunk_tokens, V] tiles (forward or backward)
    and the same accumulators."""
    N, V, H = head_tokens(s, rows), model.vocab_size, model.hidden_size
    a = 4 if s.lm_head_fp32 else s.compute_bytes
    if s.liger_loss:  # liger's fused linear + loss: a few chunks of the logits
        return rows * (s.completion_length + 1) * V * a / 8
    if s.engine == "grpo_runtime" and runtime_full_logits(s, adapters):
        return full_logits(model, s, rows, grad)
    if s.engine == "grpo_runtime":
        tile = min(N, runtime_chunk_tokens(V)) * V * 4
        tiles = (RUNTIME_BACKWARD_TILES if grad else RUNTIME_FORWARD_TILES) * tile
    else:
        tiles = min(N, TRL_TOKEN_TILE) * min(V, TRL_VOCAB_TILE) * a
    selected = N * H * a  # hidden[mask]: the scored positions, gathered
    per_token = 8 * N * 4  # running max, sums, log Z, entropy, target logit ... (fp32 [N] each)
    if not grad:
        return tiles + selected + per_token
    head_trained = not s.use_peft
    cast_back = s.weight_bytes if s.weight_bytes != 4 else 0  # the fp32 accumulator cast to the weights' dtype
    accumulators = N * H * 4 + (V * H * (4 + cast_back) if head_trained else 0)
    return tiles + selected + per_token + accumulators


def full_logits(model: ModelFacts, s: Setup, rows: int, grad: bool) -> float:
    """grpo_runtime's full-logits path (training/logprobs.py _score_full): the model's [rows, C + 1, V] logits in
    the head's dtype, then fp32 [rows, C, V] tensors: the temperature-scaled logits and the log-softmax, and in
    training with the entropy its exp and product, each with a backward buffer (measured with memprobe)."""
    C, V = s.completion_length, model.vocab_size
    head = rows * (C + 1) * V * (4 if s.lm_head_fp32 else s.compute_bytes)
    buffers = 4 if (s.entropy and grad) else 2
    return head + buffers * 4 * rows * C * V

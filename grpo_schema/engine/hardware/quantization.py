"""Bytes of a base model loaded in 4 or 8 bits by bitsandbytes (`load_in_4bit`, `load_in_8bit`: QLoRA).

The storage is bitsandbytes' own arithmetic (bitsandbytes 0.50, `functional.quantize_4bit`, `quantize_blockwise`,
`int8_vectorwise_quant`), per quantised weight of n = out x in numbers:

- 4-bit (NF4 or FP4 alike): two numbers a byte, ceil(n / 2) bytes (a `bnb_4bit_quant_storage` of bfloat16 or
  float32 packs the same bytes into wider elements), one fp32 absmax per block of 64 numbers (the default
  blocksize), and the 16-entry fp32 code table;
- nested quantisation (`use_bnb_nested_quant`, bitsandbytes' compress_statistics): the absmax of each block is
  itself quantised to one byte (`quantize_blockwise` of the absmax less their mean, blocksize 256), which adds one
  fp32 absmax per 256 blocks, a 256-entry fp32 code table and the fp32 mean (the offset);
- 8-bit (LLM.int8): one int8 per number and one fp32 scale per output row (SCB).

transformers converts the `nn.Linear` layers of the decoder only: the embeddings are not linear layers, and
lm_head (the output embeddings) is kept out of the conversion, so they, the norms and every bias stay in the dtype
the model is loaded in. A forward through a quantised layer dequantises its weight into the compute dtype
(`MatMul4Bit` and the int8 backward both build the [out, in] matrix, one layer at a time, and save only the
quantised weight for the backward): the planner holds one largest such matrix as a transient.

tests/hardware/test_quantization.py quantises real tensors with bitsandbytes and holds these numbers to the bytes
of what it returns.
"""

from __future__ import annotations

from grpo_schema.engine.hardware.models import ModelFacts

BLOCKSIZE_4BIT = 64  # bitsandbytes' default blocksize for 4-bit weights (Params4bit, quantize_4bit)
NESTED_BLOCKSIZE = 256  # quantize_blockwise of the absmax under compress_statistics
CODE_4BIT = 16 * 4  # NF4/FP4 code table: 16 fp32 values per tensor
NESTED_CODE = 256 * 4 + 4  # the 8-bit dynamic map (256 fp32) and the offset (one fp32)
KINDS = ("nf4", "fp4", "int8")


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def linear_bytes(kind: str, out_features: int, in_features: int, nested: bool = False) -> int:
    """Bytes bitsandbytes stores for one quantised [out, in] weight (bias not included)."""
    n = out_features * in_features
    if kind == "int8":
        return n + 4 * out_features  # CB (int8) + SCB (fp32 per row)
    blocks = _ceil(n, BLOCKSIZE_4BIT)
    packed = _ceil(n, 2)
    if not nested:
        return packed + 4 * blocks + CODE_4BIT
    return packed + blocks + 4 * _ceil(blocks, NESTED_BLOCKSIZE) + CODE_4BIT + NESTED_CODE


def quantized_linears(model: ModelFacts) -> list[tuple[int, int, int]]:
    """(out, in, count) of every weight transformers quantises: each decoder layer's projections (per expert for
    the MLP of a Mixture of Experts)."""
    experts = max(model.num_experts, 1)
    out = []
    for name, (fan_in, fan_out) in model.linear_shapes().items():
        count = model.num_layers * (experts if name in ("gate_proj", "up_proj", "down_proj") else 1)
        out.append((fan_out, fan_in, count))
    return out


def quantized_params(model: ModelFacts) -> int:
    return sum(o * i * c for o, i, c in quantized_linears(model))


def weight_bytes(model: ModelFacts, kind: str, nested: bool, other_bytes: int) -> float:
    """The whole model's weights: the quantised projections at bitsandbytes' storage, every other parameter
    (embeddings, lm_head, norms, biases, routers) at `other_bytes` (the dtype the model is loaded in)."""
    stored = sum(linear_bytes(kind, o, i, nested) * c for o, i, c in quantized_linears(model))
    return stored + other_bytes * (model.total_params() - quantized_params(model))


def bytes_per_param(kind: str, nested: bool = False) -> float:
    """The storage per quantised number, for a large matrix (the per-tensor tables left out)."""
    if kind == "int8":
        return 1.0
    return 0.5 + (1 / BLOCKSIZE_4BIT + 4 / (BLOCKSIZE_4BIT * NESTED_BLOCKSIZE) if nested else 4 / BLOCKSIZE_4BIT)


def dequantized_transient(model: ModelFacts, compute_bytes: int) -> float:
    """The largest weight one forward or backward dequantises at once, in the compute dtype."""
    return max(o * i for o, i, _ in quantized_linears(model)) * compute_bytes


def describe(kind: str, nested: bool) -> str:
    if kind == "int8":
        return "8-bit (LLM.int8: 1 byte a number + an fp32 scale per row)"
    extra = ", nested: 8-bit absmax" if nested else ""
    return f"4-bit {kind.upper()} ({bytes_per_param(kind, nested):.4f} bytes a number{extra})"

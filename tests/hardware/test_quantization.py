"""Quantised base weights (load_in_4bit / load_in_8bit) against bitsandbytes itself: real tensors quantised on the
CPU, the bytes of what bitsandbytes returns (packed data, absmax, nested constants, code tables; int8 data and
per-row scales) against grpo_schema.engine.hardware.quantization, and `grpo plan`'s weights with load_in_4bit on
and off against the same measured storage."""

import pytest

from grpo_schema.commands.plan import check_for_hardware
from grpo_schema.engine.hardware.catalogue import lookup
from grpo_schema.engine.hardware.quantization import linear_bytes, quantized_linears, quantized_params

SHAPES = [(384, 1024), (896, 4864), (1000, 333)]  # (out, in); the last not a multiple of a block


def _bnb():
    pytest.importorskip("torch", reason="bitsandbytes' quantisation runs on torch")
    return pytest.importorskip("bitsandbytes.functional", reason="bitsandbytes is not installed")


def stored_bytes(kind: str, out: int, inp: int, nested: bool) -> int:
    """What bitsandbytes keeps for one [out, in] bf16 weight, in bytes."""
    F = _bnb()  # skips, saying why, before torch is imported
    import torch

    weight = torch.randn(out, inp, dtype=torch.bfloat16)
    if kind == "int8":
        data, scales, _ = F.int8_vectorwise_quant(weight)
        tensors = [data, scales]
    else:
        data, state = F.quantize_4bit(weight, quant_type=kind, compress_statistics=nested)
        tensors = [data, state.absmax, state.code]
        if nested:
            tensors += [state.state2.absmax, state.state2.code, state.offset]
    return sum(t.numel() * t.element_size() for t in tensors)


@pytest.mark.parametrize(
    "kind, nested", [("nf4", False), ("fp4", False), ("nf4", True), ("fp4", True), ("int8", False)]
)
@pytest.mark.parametrize("out, inp", SHAPES)
def test_storage_is_bitsandbytes_own(kind, nested, out, inp):
    assert linear_bytes(kind, out, inp, nested) == stored_bytes(kind, out, inp, nested)


BASE = {
    "model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct",
    "dataset_name": "trl-lib/DeepMath-103K",
    "reward_funcs": ["accuracy_reward"],
    "dtype": "bfloat16",
    "bf16": True,
    "per_device_train_batch_size": 8,
    "num_generations": 8,
    "max_completion_length": 256,
    "use_peft": True,
    "lora_target_modules": "all-linear",
}


def weights(extra: dict) -> float:
    result, report = check_for_hardware(
        {**BASE, **extra}, "q.yaml", "1xT4-16GB", prompt_length=128, batch_fixes=False, local_files=False
    )
    assert result.valid, [d.message for d in result.diagnostics if d.severity == "error"]
    return report.memory.part("weights")


@pytest.mark.parametrize(
    "extra, kind, nested",
    [
        ({"load_in_4bit": True}, "nf4", False),
        ({"load_in_4bit": True, "bnb_4bit_quant_type": "fp4"}, "fp4", False),
        ({"load_in_4bit": True, "use_bnb_nested_quant": True}, "nf4", True),
        ({"load_in_8bit": True}, "int8", False),
    ],
)
def test_toggling_quantisation_changes_weights_by_bitsandbytes_storage(extra, kind, nested):
    model = lookup(BASE["model_name_or_path"])
    full = weights({})
    assert full == 2 * model.total_params()
    measured = sum(stored_bytes(kind, out, inp, nested) * count for out, inp, count in quantized_linears(model))
    expected = full - 2 * quantized_params(model) + measured  # embeddings, norms, biases stay in bf16
    assert weights(extra) == pytest.approx(expected, rel=1e-9)
    # the 0.5B model's tied embedding, a fifth of it, stays in 16 bits
    assert weights(extra) < (0.7 if kind == "int8" else 0.5) * full

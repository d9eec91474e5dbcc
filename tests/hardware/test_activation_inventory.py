"""The activation inventory (grpo_schema.engine.hardware.activations) against the tensors autograd really keeps: a
small Llama trunk runs its forward under torch's saved-tensor hooks, and every saved tensor that is not a parameter
is counted once per storage, plus the trunk's output. Full fine-tuning and LoRA (with and without dropout, on some or
all projections), SDPA and eager attention, fp32, a bf16 base under fp32 adapters, and bf16 autocast: each within 1%.
Seconds on a CPU; the resident-set calibration of the same cases is tests/hardware/test_measured.py."""

import contextlib

import pytest

from grpo_schema.engine.hardware.activations import trunk_bytes
from grpo_schema.engine.hardware.memory import Setup, autocast_copies
from grpo_schema.engine.hardware.models import ModelFacts

torch = pytest.importorskip("torch", reason="the inventory is held to torch's own saved tensors")
pytest.importorskip("peft", reason="LoRA is peft's")

SHAPE = dict(hidden=256, layers=3, intermediate=768, heads=4, kv_heads=2, vocab=1000, batch=4, tokens=48)
ALL = "all-linear"
CASES = [  # (attention, LoRA targets, lora_dropout, weights' dtype, bf16 autocast)
    ("sdpa", None, 0.0, "float32", False),
    ("sdpa", None, 0.0, "bfloat16", False),
    ("eager", None, 0.0, "float32", False),
    ("eager", None, 0.0, "bfloat16", False),
    ("sdpa", ["q_proj", "v_proj"], 0.0, "float32", False),
    ("sdpa", ["q_proj", "v_proj"], 0.05, "float32", False),
    ("sdpa", ALL, 0.0, "float32", False),
    ("sdpa", ALL, 0.05, "float32", False),
    ("eager", ALL, 0.05, "float32", False),
    ("sdpa", ["o_proj", "down_proj"], 0.0, "float32", False),
    ("sdpa", ALL, 0.0, "bfloat16", False),
    ("sdpa", ALL, 0.05, "bfloat16", False),
    ("sdpa", ALL, 0.0, "bfloat16", True),
    ("eager", ALL, 0.05, "bfloat16", True),
]


def saved_bytes(attention, targets, dropout, dtype, autocast) -> int:
    """Bytes of every non-parameter tensor the trunk's forward saves for backward (once per storage), and its
    output, for a left-padded batch; under autocast, the half-precision copies of the fp32 adapters included."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(
        vocab_size=SHAPE["vocab"],
        hidden_size=SHAPE["hidden"],
        num_hidden_layers=SHAPE["layers"],
        intermediate_size=SHAPE["intermediate"],
        num_attention_heads=SHAPE["heads"],
        num_key_value_heads=SHAPE["kv_heads"],
        tie_word_embeddings=False,
        attn_implementation=attention,
    )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    if targets:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(
            model, LoraConfig(r=16, lora_alpha=32, lora_dropout=dropout, target_modules=targets, task_type="CAUSAL_LM")
        )
    model.train()
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    ids = torch.randint(0, SHAPE["vocab"], (SHAPE["batch"], SHAPE["tokens"]))
    mask = torch.ones_like(ids)
    mask[: SHAPE["batch"] // 2, : SHAPE["tokens"] // 4] = 0  # left padding, as GRPO's prompts
    seen: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in parameters and tensor.dtype != torch.int64:  # the token ids are not activations
            seen[storage.data_ptr()] = storage.nbytes()
        return tensor

    trunk = model.get_base_model().model if targets else model.model
    cast = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor), cast:
        output = trunk(input_ids=ids, attention_mask=mask).last_hidden_state
    return sum(seen.values()) + output.untyped_storage().nbytes()


def planned_bytes(attention, targets, dropout, dtype, autocast) -> float:
    half = dtype != "float32"
    facts = ModelFacts(
        "probe",
        SHAPE["hidden"],
        SHAPE["layers"],
        SHAPE["intermediate"],
        SHAPE["heads"],
        SHAPE["kv_heads"],
        SHAPE["vocab"],
    )
    tokens = SHAPE["tokens"]
    setup = Setup(
        world_size=1,
        micro_batch=SHAPE["batch"],
        prompt_length=tokens // 2,
        completion_length=tokens - tokens // 2,
        generation_rows=SHAPE["batch"],
        weight_bytes=2 if half else 4,
        compute_bytes=2 if (half or autocast) else 4,
        mixed_precision=autocast,
        activation_checkpointing=False,
        attention=attention,
        use_peft=bool(targets),
        lora_targets=(tuple(targets) if isinstance(targets, list) else (targets,)) if targets else None,
        lora_dropout=dropout,
        device="cpu",
    )
    # under autocast the matmuls also keep the adapters' half-precision copies: the plan's autocast copies
    return trunk_bytes(facts, setup, SHAPE["batch"] * tokens) + autocast_copies(facts, setup)


def case_id(case) -> str:
    attention, targets, dropout, dtype, autocast = case
    adapted = targets if isinstance(targets, str) else "+".join(targets or ["full"])
    return f"{attention}-{adapted}-p{dropout}-{dtype}" + ("-autocast" if autocast else "")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_inventory_matches_the_tensors_autograd_keeps(case):
    got, planned = saved_bytes(*case), planned_bytes(*case)
    # rotary's cos and sin, [1, 1, T, head_dim] per layer and shared by the rows, are left out: under 0.5% here
    assert abs(planned - got) <= 0.01 * got, (case, planned, got)

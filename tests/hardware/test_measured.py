"""The estimate against measurement: grpo_runtime's own training step (grpo_runtime.memprobe) against the
planner's grpo_runtime figures, each main part within 15% (or 4 MB, the resident-set noise floor on CPU) and the
total within 15%.

Cases: 3 model sizes x 3 batch shapes, then one case per thing the planner must get right on its own: a Qwen-sized
vocabulary (151,936) with completions long enough for several head chunks, a larger batch, LoRA on every attention
and MLP projection, LoRA on lm_head too (the runtime's full-logits path), LoRA's activations (a frozen base saves no
linear layer's input) with and without lora_dropout, under eager attention, with activation checkpointing and on a
bf16 base, full fine-tuning under eager attention, and DeepSpeed ZeRO-3 on 2 CPU processes (each process's peak).
vLLM colocate runs in tests/hardware/test_measured_vllm.py (vLLM's own environment).
On CPU the probe reads resident-set deltas in fresh processes; with a GPU, torch.cuda.max_memory_allocated.
About 6 min of CPU time (23 fresh processes, the two ZeRO-3 ones at once; 16 min on 2 cores shared with other
work); marked slow."""

import json

import pytest

from grpo_schema.engine.hardware.head_memory import runtime_full_logits
from grpo_schema.engine.hardware.memory import estimate_memory
from tests.support.memprobe import TOLERANCE, ZERO3, close, facts_of, measured, pairs, setup_of

pytest.importorskip("torch", reason="the measurement runs grpo_runtime (the runtime extra)")

MODELS = [
    dict(hidden=256, layers=2, intermediate=768, heads=4, kv_heads=2, vocab=16000),
    dict(hidden=384, layers=4, intermediate=1024, heads=6, kv_heads=2, vocab=16000),
    dict(hidden=512, layers=6, intermediate=1536, heads=8, kv_heads=4, vocab=24000),
]
SHAPES = [
    dict(batch=2, prompt=16, completion=16),
    dict(batch=4, prompt=32, completion=48),
    dict(batch=8, prompt=48, completion=64),
]
ALL_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LORA_TRUNK = dict(
    hidden=256, layers=4, intermediate=768, heads=4, kv_heads=2, vocab=8000, batch=8, prompt=64, completion=64
)
CHECKPOINTED = dict(LORA_TRUNK, vocab=4000, batch=16, checkpointing=True)
# Qwen2.5's vocabulary on a tiny trunk: the head dominates; 2 x 256 completion tokens are 10 chunks of 55 tokens.
QWEN_VOCAB = dict(hidden=64, layers=2, intermediate=128, heads=4, kv_heads=2, vocab=151936)
CASES = {
    "qwen-vocab-256": dict(QWEN_VOCAB, batch=2, prompt=32, completion=256),
    "batch-32": dict(MODELS[1], batch=32, prompt=32, completion=32),
    "lora-projections": dict(
        MODELS[0], vocab=32000, batch=4, prompt=32, completion=64, lora={"r": 16, "targets": ALL_PROJECTIONS}
    ),
    # lm_head adapted with TRL's default lora_dropout 0.05: the runtime scores through the full logits
    "lora-lm-head": dict(
        MODELS[0],
        vocab=32000,
        batch=4,
        prompt=32,
        completion=64,
        lora={"r": 16, "targets": ALL_PROJECTIONS + ["lm_head"]},
    ),
    # LoRA's activations by attention implementation, dropout and checkpointing: a trunk of 4 layers over 8 x 128
    # tokens, whose saved tensors are most of the step (a frozen base saves no linear layer's input)
    "lora-qv-no-dropout": dict(LORA_TRUNK, lora={"r": 16, "targets": ["q_proj", "v_proj"], "dropout": 0.0}),
    "lora-all-dropout": dict(LORA_TRUNK, lora={"r": 16, "targets": ALL_PROJECTIONS}),
    "lora-all-eager": dict(LORA_TRUNK, attention="eager", lora={"r": 16, "targets": ALL_PROJECTIONS}),
    # checkpointed: 16 x 128 tokens over a 4,000 vocabulary, so that the recomputed layer, not the head, is the peak
    "lora-all-checkpointing": dict(CHECKPOINTED, lora={"r": 16, "targets": ALL_PROJECTIONS}),
    "lora-all-checkpointing-no-dropout": dict(CHECKPOINTED, lora={"r": 16, "targets": ALL_PROJECTIONS, "dropout": 0.0}),
    # a bf16 base under fp32 adapters: every adapted module saves its own fp32 cast of its input
    "lora-all-bf16": dict(LORA_TRUNK, dtype="bfloat16", lora={"r": 16, "targets": ALL_PROJECTIONS, "dropout": 0.0}),
    "full-eager": dict(LORA_TRUNK, attention="eager"),
}
# gradient_accumulation_steps 1: the backward builds the gradients as it frees the saved tensors, so its peak is the
# larger of the two, not their sum (memory.PHASES' "update"); a trunk whose gradients and activations are alike, no
# reference, so that the sum would be a fifth too much
ONE_MICRO_STEP = dict(LORA_TRUNK, vocab=4000, batch=2, prompt=48, completion=64, reference=False, accumulation=1)


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def compare(case: dict, got: dict, device: str) -> dict:
    """Each part and the total, predicted and measured; asserts them within the tolerance (the total without the
    noise floor)."""
    report = pairs(case, got, device)
    shown = json.dumps(
        {name: [round(ours / 1e6, 1), round(theirs / 1e6, 1)] for name, (ours, theirs) in report.items()}
    )
    print("predicted, measured (MB):", shown)  # pytest -rP shows it: the calibration table of docs/planner.md
    wrong = [name for name, (ours, theirs) in report.items() if name != "total" and not close(ours, theirs)]
    assert not wrong, f"{wrong}: {shown}"
    ours, theirs = report["total"]
    assert abs(ours - theirs) <= TOLERANCE * theirs, shown
    return report


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS, ids=["small", "medium", "large"])
@pytest.mark.parametrize("shape", SHAPES, ids=["b2", "b4", "b8"])
def test_estimate_matches_grpo_runtime(model, shape):
    device = _device()
    case = {**model, **shape}
    compare(case, measured(case, device), device)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_estimate_matches_grpo_runtime_case(name):
    device = _device()
    case = CASES[name]
    got = measured(case, device)
    # the planner's rule for the runtime's head path (head_memory.RUNTIME_FULL_LOGITS) is the one that ran
    assert bool(got["chunked_head"]) == (runtime_full_logits(setup_of(case, device)) is None), got
    compare(case, got, device)


@pytest.mark.slow
def test_estimate_matches_zero3_on_two_processes():
    """Each process's own peak: what DeepSpeed holds between steps (shards, gradient partitions, Adam's moments,
    the reduction bucket), the trunk's activations, and the step's peak with the gathered layers and the head."""
    device = _device()
    got = measured(ZERO3, device)
    assert len(got["ranks"]) == 2
    setup = setup_of(ZERO3, device)
    estimate = estimate_memory(facts_of(ZERO3), setup)
    for rank in got["ranks"]:
        assert bool(rank["chunked_head"]) == (runtime_full_logits(setup) is None), rank
        report = {
            "held": (estimate.phase_total("held"), rank["held"]),
            "activations": (estimate.part("activations"), rank["activations"]),
            "step": (
                estimate.phase_total("training") - estimate.part("activations"),
                rank["total"] - rank["held"] - rank["activations"],
            ),
            "total": (estimate.total, rank["total"]),
        }
        report = {k: (round(a / 1e6, 1), round(b / 1e6, 1)) for k, (a, b) in report.items()}
        print("predicted, measured (MB):", json.dumps(report))
        wrong = [k for k, (ours, theirs) in report.items() if not close(ours * 1e6, theirs * 1e6)]
        assert not wrong, (wrong, report)


@pytest.mark.slow
def test_estimate_matches_one_micro_step_a_window():
    """The step's peak with gradient_accumulation_steps 1 (the gradients the backward builds are not held beside the
    saved tensors it frees) within 15%; summing the two would over-count it by a quarter."""
    device = _device()
    got = measured(ONE_MICRO_STEP, device)
    estimate = estimate_memory(facts_of(ONE_MICRO_STEP), setup_of(ONE_MICRO_STEP, device))
    summed = estimate.total + estimate.part("gradients") if estimate.peak_phase != "update" else estimate.total
    shown = json.dumps(
        {
            "total": [round(estimate.total / 1e6, 1), round(got["total"] / 1e6, 1)],
            "summed": round(summed / 1e6, 1),
            "peak_phase": estimate.peak_phase,
        }
    )
    print("predicted, measured (MB):", shown)
    assert abs(estimate.total - got["total"]) <= TOLERANCE * got["total"], shown
    assert summed - got["total"] > TOLERANCE * got["total"], shown  # the sum would be wrong: the test can tell

"""The runtime's memory probe (grpo_runtime.memprobe) run on a case in a fresh process, and the planner's figures
for the same case: the settings memprobe runs with, and each part predicted beside the part measured."""

import json
import math
import os
import subprocess
import sys

from grpo_schema.engine.hardware.activations import trunk_bytes
from grpo_schema.engine.hardware.memory import Setup, estimate_memory
from grpo_schema.engine.hardware.models import ModelFacts
from grpo_schema.engine.hardware.states_memory import lora_params

# DeepSpeed ZeRO-3 (the config's `deepspeed` field) on 2 processes, beta 0 (TRL's default: no reference), a trunk
# large next to its head so that the gathered layers and the sharded states are most of the peak.
ZERO3 = dict(
    hidden=256,
    layers=6,
    intermediate=768,
    heads=4,
    kv_heads=2,
    vocab=8000,
    batch=4,
    prompt=32,
    completion=64,
    world_size=2,
    strategy="zero3",
    reference=False,
)
PARTS = {
    "weights": "weights",
    "reference": "reference",
    "gradients": "gradients",
    "optimizer": "optimizer",
    "activations": "activations",
    "logits": "logits",
    "scoring": "log-prob pass",
}
NOISE = 4e6
TOLERANCE = 0.15


def measured(case: dict, device: str) -> dict:
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "0"}
    run = subprocess.run(
        [sys.executable, "-m", "grpo_runtime.memprobe", json.dumps(case), "--device", device],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def facts_of(case: dict) -> ModelFacts:
    return ModelFacts(
        "probe", case["hidden"], case["layers"], case["intermediate"], case["heads"], case["kv_heads"], case["vocab"]
    )


def setup_of(case: dict, device: str) -> Setup:
    """The planner's settings for what memprobe runs: fp32, AdamW, no checkpointing, 2 micro-steps a window."""
    lora = case.get("lora")
    width = 2 if case.get("dtype") == "bfloat16" else 4
    return Setup(
        world_size=case.get("world_size", 1),
        micro_batch=case["batch"],
        prompt_length=case["prompt"],
        completion_length=case["completion"],
        generation_rows=case["batch"],
        gradient_accumulation_steps=case.get("accumulation", 2),
        weight_bytes=width,
        compute_bytes=width,
        optim="adamw_torch",
        activation_checkpointing=bool(case.get("checkpointing")),
        attention=case.get("attention", "sdpa"),
        reference=case.get("reference", True),
        device=device,
        engine="grpo_runtime",
        strategy=case.get("strategy", "ddp"),
        use_peft=bool(lora),
        lora_r=(lora or {}).get("r", 16),
        lora_targets=tuple(lora["targets"]) if lora else None,
        lora_dropout=(lora or {}).get("dropout", 0.05),
    )


def close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= max(TOLERANCE * theirs, NOISE)


def pairs(case: dict, got: dict, device: str) -> dict:
    """{part: (predicted, measured)} in bytes, the total included."""
    setup = setup_of(case, device)
    estimate = estimate_memory(facts_of(case), setup)
    out = {name: (estimate.part(part), got[name]) for name, part in PARTS.items()}
    if setup.activation_checkpointing:
        # the forward keeps each layer's input; the layer recomputed in the backward (where it exceeds the head's
        # buffers) is in the step's peak, which the total holds
        tokens = case["batch"] * (case["prompt"] + case["completion"])
        out["activations"] = (trunk_bytes(facts_of(case), setup, tokens, head=math.inf), got["activations"])
        del out["logits"]
    if case.get("lora"):
        # the planner's `lora` part is the adapters' fp32 weights, gradients and optimizer states together;
        # memprobe sees the adapters' weights inside `weights`, their gradients and moments apart
        adapter_weights = 4 * lora_params(facts_of(case), setup)
        out["weights"] = (estimate.part("weights") + adapter_weights, got["weights"])
        out["adapter states"] = (estimate.part("lora") - adapter_weights, got["gradients"] + got["optimizer"])
        del out["gradients"], out["optimizer"]
        if setup.activation_checkpointing or setup.compute_bytes == 2:
            # the first step's many small allocations (the recomputation's, bf16's casts) leave 4-5 MB of freed
            # heap the process keeps, above the adapters' few MB: the total holds them
            del out["adapter states"]
    out["total"] = (estimate.total, got["total"])
    return out

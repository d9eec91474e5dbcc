"""The DeepSpeed ZeRO-3 case: this process of a WORLD_SIZE-process job builds the runtime's Accelerator for a config
with ZeRO-3 in its `deepspeed` field, and steps through the runtime's own backward (sharding.backward)."""

from __future__ import annotations

import os

from grpo_runtime.training.logprobs import completion_logps


def zero3_accelerator(case: dict):
    """The runtime's Accelerator (setup.new_accelerator) for a config with DeepSpeed ZeRO-3 in its `deepspeed`
    field, in this process of a WORLD_SIZE-process job."""
    import yaml

    from grpo_runtime.setup import new_accelerator
    from grpo_schema import check_text

    if case.get("reference", True):
        # the runtime partitions the reference under its own optimizer-less DeepSpeed engine
        # (sharding.prepare_reference); the probe does not build that engine yet
        raise SystemExit('memprobe: a ZeRO-3 case runs without a reference ("reference": false)')
    world = int(os.environ["WORLD_SIZE"])
    settings = dict(
        model_name_or_path="memprobe",
        dataset_name="memprobe.jsonl",
        output_dir="memprobe-out",
        reward_funcs=["grpo_runtime.data.reward_library.target_word_reward"],
        per_device_train_batch_size=case["batch"],
        num_generations=2,
        gradient_accumulation_steps=2,
        max_completion_length=case["completion"],
        use_cpu=True,
        bf16=False,
        activation_checkpointing=False,
        optim="adamw_torch",
        learning_rate=1e-5,
        report_to="none",
        deepspeed={
            "zero_optimization": {"stage": 3, **_offload(case.get("offload"))},
            "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": "auto",
        },
    )
    result = check_text(yaml.safe_dump(settings), world_size=world)
    if not result.valid or result.plan is None:
        raise SystemExit(f"memprobe: the ZeRO-3 config does not validate: {result.diagnostics}")
    return new_accelerator(result.config, result.plan)


def _offload(which: str | None) -> dict:
    """DeepSpeed's CPU offload of the optimizer states ("optimizer"), the parameters ("params") or both."""
    out = {}
    if which in ("optimizer", "both"):
        out["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if which in ("params", "both"):
        out["offload_param"] = {"device": "cpu", "pin_memory": True}
    return out


def zero3_window(accelerator, model, args, entropy, meter, start, out) -> dict:
    """ZeRO-3: accelerate's prepare built DeepSpeed's engine, whose optimizer allocates the fp32 partitions, the
    gradient partitions and Adam's moments at once (the `states` part). The window is two micro-steps through the
    runtime's own backward (sharding.backward: DeepSpeed steps at the boundary)."""
    from grpo_runtime.distributed.sharding import backward

    def step(last: bool) -> None:
        logps, entropies, _ = completion_logps(model, *args, with_entropy=entropy)
        loss = -(logps.sum() + (entropies.sum() * 1e-3 if entropies is not None else 0)) / logps.numel()
        backward(accelerator, model, loss, last)

    step(False)
    step(True)  # the first optimizer step
    out["held"] = meter.now() - start  # everything kept between steps: shards, states, DeepSpeed's buffers
    before = meter.now()
    meter.reset_peak()  # the steady state
    step(False)
    step(True)
    out["logits"] = meter.peak() - before - out["activations"]
    out["total"] = meter.peak() - start
    return out

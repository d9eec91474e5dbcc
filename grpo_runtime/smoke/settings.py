"""`grpo smoke`'s settings: what needs a GPU, the network or a long time (device, attention, precision, vLLM,
reporters, completion length, DeepSpeed), the world size this machine can run, and the bound on the work per
micro-step that keeps the schedule's shape."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from grpo_runtime.smoke.plan import (
    ELSEWHERE,
    EXERCISED,
    NOT_EXERCISED,
    SUBSTITUTED,
    SmokePlan,
    SmokeRefused,
    another_machines,
    refuse_strict,
)
from grpo_schema.engine.words import plural

COMPLETION_CAP = 32  # tokens: enough for a reward to see a real completion, short enough for a CPU
ROWS_PER_OPTIMIZER_STEP = 64  # completions a process trains on per optimizer step, at most (bound_batch)
MAX_CPU_PROCESSES = 2
NETWORK_REPORTERS = {
    "wandb",
    "trackio",
    "mlflow",
    "comet_ml",
    "neptune",
    "clearml",
    "dagshub",
    "dvclive",
    "swanlab",
    "azure_ml",
    "codecarbon",
}


def cpu_process_limit() -> int:
    return max(1, min(MAX_CPU_PROCESSES, os.cpu_count() or 1))


def installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def substitute_settings(config, raw: dict, plan: SmokePlan, workdir: Path) -> None:
    overrides = plan.overrides
    overrides.update(use_cpu=True, output_dir=str(workdir / "output"), logging_steps=1, disable_tqdm=True)
    _device_and_precision(config, plan)
    _generation_and_hub(config, plan)
    _logging(config, plan)
    _evaluation_and_resume(config, plan)
    _one_machine(raw, plan)
    _peft_and_sharding(config, raw, plan, workdir)


def _device_and_precision(config, plan: SmokePlan) -> None:
    """CPU processes, the completion length cap, and off what needs a GPU (flash attention, tf32, compilation, fp16)."""
    overrides = plan.overrides
    if config.use_cpu:
        plan.add("device", EXERCISED, "CPU, as written")
    else:
        plan.add("device", SUBSTITUTED, "CPU processes (use_cpu: true) instead of GPUs")
    length = config.max_completion_length
    if length is not None and length > COMPLETION_CAP:
        overrides["max_completion_length"] = COMPLETION_CAP
        plan.add("completion length", SUBSTITUTED, f"max_completion_length capped at {COMPLETION_CAP} (was {length})")
    else:
        plan.add("completion length", EXERCISED, f"max_completion_length {length}")
    attention = config.attn_implementation or ""
    if "flash" in attention or attention.startswith("kernels"):
        overrides["attn_implementation"] = "sdpa"
        plan.add("attention", NOT_EXERCISED, f"{attention} needs a GPU; sdpa ran instead")
    for key in ("tf32", "torch_compile"):
        if getattr(config, key, None):
            overrides[key] = False if key == "torch_compile" else None
            plan.add(key, NOT_EXERCISED, f"{key} is for GPUs (compilation takes minutes); off for the smoke")
    if config.fp16:
        overrides.update(fp16=False)
        plan.add("precision", NOT_EXERCISED, "fp16 mixed precision needs a GPU; float32 on CPU")
    else:
        plan.add("precision", EXERCISED, "bf16" if config.bf16 else f"dtype {config.dtype or 'auto'}")


def _generation_and_hub(config, plan: SmokePlan) -> None:
    """vLLM where it is installed (else transformers generate); never a push to the Hub."""
    overrides = plan.overrides
    if config.use_vllm:
        if installed("vllm"):
            plan.add("generation", EXERCISED, f"vLLM {config.vllm_mode}")
        else:
            overrides["use_vllm"] = False
            plan.add(
                "generation",
                NOT_EXERCISED,
                f"vLLM ({config.vllm_mode}) is not installed here; completions came from transformers generate",
            )
    else:
        plan.add("generation", EXERCISED, "transformers generate")
    if config.push_to_hub or config.log_completions_hub_repo:
        overrides.update(push_to_hub=False, log_completions_hub_repo=None)
        plan.add("hub push", NOT_EXERCISED, "never sent from a smoke test")


def _logging(config, plan: SmokePlan) -> None:
    """The reporters that need no network; metrics.jsonl is always written."""
    overrides = plan.overrides
    reporters = config.report_to if isinstance(config.report_to, list) else [config.report_to]
    reporters = [str(r) for r in reporters if r is not None]
    if "all" in reporters:
        reporters = ["tensorboard"] if installed("tensorboard") else ["none"]
    kept = [r for r in reporters if r not in NETWORK_REPORTERS and r != "none"]
    dropped = [r for r in reporters if r in NETWORK_REPORTERS]
    if dropped:
        overrides["report_to"] = kept or "none"
        plan.add(
            "logging",
            NOT_EXERCISED,
            f"{', '.join(dropped)} needs the network; " + (f"{', '.join(kept)} ran" if kept else "metrics.jsonl only"),
        )
    else:
        plan.add("logging", EXERCISED, ", ".join(kept) if kept else "metrics.jsonl")


def _evaluation_and_resume(config, plan: SmokePlan) -> None:
    """Evaluation at every step when the file evaluates; the resume target is the smoke's own checkpoint."""
    overrides = plan.overrides
    if config.eval_strategy not in (None, "no"):
        overrides.update(eval_strategy="steps", eval_steps=1)
        plan.add(
            "evaluation",
            EXERCISED,
            f"every step (was {config.eval_strategy}"
            + (f", every {config.eval_steps}" if config.eval_strategy == "steps" else "")
            + ")",
        )
    if config.resume_from_checkpoint not in (None, False, "false", "False"):
        plan.add(
            "resume target",
            SUBSTITUTED,
            f"resume_from_checkpoint ({config.resume_from_checkpoint}) replaced by the smoke's own checkpoint-1",
        )


def _one_machine(raw: dict, plan: SmokePlan) -> None:
    """The smoke runs on this one machine: the launch keys that name others are reset."""
    overrides = plan.overrides
    for key in ("num_machines",):
        if raw.get(key) not in (None, 1):
            overrides[key] = 1
    for key in ("main_process_ip", "machine_rank"):
        if key in raw:
            overrides[key] = None


def _peft_and_sharding(config, raw: dict, plan: SmokePlan, workdir: Path) -> None:
    """LoRA and quantisation as written; sharding on gloo, with a DeepSpeed stand-in where the file's is elsewhere."""
    lora = config.use_peft or bool(config.lora_target_modules and config.use_peft)
    quantised = config.load_in_4bit or config.load_in_8bit
    if lora or quantised:
        what = [f"LoRA r={config.lora_r} on {config.lora_target_modules or 'the default modules'}"] if lora else []
        what += ["4-bit" if config.load_in_4bit else "8-bit"] if quantised else []
        plan.add("PEFT and quantisation", EXERCISED, ", ".join(what))
    substitute_deepspeed(config, plan, workdir)
    sharded = (
        config.deepspeed
        or config.fsdp
        or raw.get("accelerate_config")
        or raw.get("use_deepspeed")
        or raw.get("use_fsdp")
    )
    if sharded:
        # a substituted DeepSpeed path is not what ran: name the stand-in, not the other machine's file
        stand_in = "the DeepSpeed stand-in" if "deepspeed" in plan.overrides else None
        what = raw.get("accelerate_config") or stand_in or config.deepspeed or config.fsdp or "as written"
        plan.add("sharding", EXERCISED, f"{what} on gloo")


def zero_stage_of(name: str) -> int:
    """The ZeRO stage a DeepSpeed config's file name says (zero3.json, ds_z2_offload.json, stage1.json), else 2."""
    found = re.search(r"(?:zero|stage|z)[_-]?([0-3])", Path(name).name.lower())
    return int(found.group(1)) if found else 2


def substitute_deepspeed(config, plan: SmokePlan, workdir: Path) -> None:
    """`deepspeed: PATH` of another machine: a DeepSpeed config of the ZeRO stage its name says, every batch and
    precision value "auto" (filled from the config, as for the bundled ones)."""
    path = config.deepspeed
    if not isinstance(path, str) or not another_machines(path):
        return
    refuse_strict(plan, "sharding", "DeepSpeed config", path, "deepspeed")
    stage = zero_stage_of(path)
    stand_in = {
        "zero_optimization": {"stage": stage},
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
        "bf16": {"enabled": "auto"},
        "fp16": {"enabled": "auto"},
    }
    target = workdir / "deepspeed.json"
    target.write_text(json.dumps(stand_in, indent=1), encoding="utf-8")
    plan.overrides["deepspeed"] = str(target)
    plan.add(
        "DeepSpeed config",
        SUBSTITUTED,
        f"ZeRO stage {stage} (as its name says), every batch and precision "
        f"value auto, instead of {path} ({ELSEWHERE}: not on this machine)",
    )


def choose_world_size(path: str, config, plan: SmokePlan, declared: int, checked) -> int:
    """The declared world size when this machine can run that many CPU processes, else the smallest world size
    whose batch schedule (per process, unchanged) is valid. `checked(size)` validates the smoke's config."""
    limit = cpu_process_limit()
    at_declared = checked(declared)
    if not at_declared.valid:  # the substitutions broke the config: say which diagnostics, not a world size
        errors = [
            f"{d.code} {', '.join(d.fields)}: {d.message}" for d in at_declared.diagnostics if d.severity == "error"
        ]
        raise SmokeRefused(
            "substitution", "the config with the smoke's substitutions does not validate: " + "; ".join(errors[:5])
        )
    if declared <= limit:
        plan.add("world size", EXERCISED, f"{plural(declared, 'CPU process')} as declared")
        return declared
    for size in range(1, limit + 1):
        if checked(size).valid:
            plan.add(
                "world size",
                SUBSTITUTED,
                f"{plural(size, 'CPU process')} instead of {declared}, with the same "
                "per-process batch schedule (this machine runs at most "
                f"{plural(limit, 'CPU process')})",
            )
            return size
    # No world size this machine runs keeps whole groups with the per-process batch as written (a recipe for 7 or
    # 8 processes): one group per micro-batch instead, said so.
    changed = {"per_device_train_batch_size": config.num_generations}
    if config.generation_batch_size is not None:
        changed["generation_batch_size"] = None
    if config.eval_strategy not in (None, "no"):
        changed["per_device_eval_batch_size"] = config.num_generations_eval or config.num_generations
    plan.overrides.update(changed)
    for size in range(1, limit + 1):
        if checked(size).valid:
            was = f"per_device_train_batch_size {config.per_device_train_batch_size}"
            plan.add(
                "world size",
                SUBSTITUTED,
                f"{plural(size, 'CPU process')} instead of {declared}; no world "
                f"size up to {limit} keeps whole groups with the per-process batch as written, so "
                f"per_device_train_batch_size is {config.num_generations} (one group; was {was.split()[-1]})",
            )
            return size
    for key in changed:
        plan.overrides.pop(key)
    raise SmokeRefused(
        "world size",
        f"{path} needs {declared} processes and no world size up to {limit} (what this "
        f"machine's {plural(os.cpu_count() or 1, 'CPU core')} run) keeps its batch schedule valid",
        "num_processes",
    )


def bound_batch(config, plan: SmokePlan, checked) -> None:
    """Bound the work of an optimizer step, keeping the schedule's shape: when a process's micro-batches over an
    optimizer step hold more than ROWS_PER_OPTIMIZER_STEP rows, per_device_train_batch_size becomes the largest
    value under that bound (at least the smallest) whose generation batch still holds whole groups of
    num_generations, with steps_per_generation, num_iterations and gradient_accumulation_steps as written (so generation happens on the same micro-steps, the
    optimizer steps on the same ones, and the off-policy pattern (GA % (steps_per_generation * num_iterations))
    is the same). A generation_batch_size set in the file is scaled with it."""
    import math

    world = plan.world_size
    before = checked(world)
    spg = getattr(before.plan, "steps_per_generation", None) if getattr(before, "plan", None) else None
    generations = config.num_generations
    batch = plan.overrides.get("per_device_train_batch_size", config.per_device_train_batch_size)
    if not spg or not generations or not batch:
        return
    step = generations // math.gcd(generations, spg * world)  # the batch sizes that keep whole groups
    accumulation = max(1, config.gradient_accumulation_steps or 1)
    smallest = step * max(1, (ROWS_PER_OPTIMIZER_STEP // accumulation) // step)
    if smallest >= batch:
        return
    changed = {"per_device_train_batch_size": smallest}
    if config.generation_batch_size is not None:
        changed["generation_batch_size"] = smallest * spg * world
    kept = {key: plan.overrides.get(key) for key in changed}
    plan.overrides.update(changed)
    after = checked(world)
    if not after.valid or getattr(after.plan, "steps_per_generation", None) != spg:
        for key, value in kept.items():  # the schedule would not keep its shape: as written
            if value is None:
                plan.overrides.pop(key, None)
            else:
                plan.overrides[key] = value
        return
    groups = smallest * spg * world // generations
    plan.add(
        "batch size",
        SUBSTITUTED,
        f"per_device_train_batch_size {smallest} (was {batch}): "
        f"{plural(groups, 'group')} of {generations} completions per generation instead of "
        f"{batch * spg * world // generations}, with "
        f"steps_per_generation {spg}, num_iterations {config.num_iterations} and gradient_accumulation_steps "
        f"{config.gradient_accumulation_steps} as written (the same schedule, less work per micro-step)",
    )


def cap_generation_kwargs(config, plan: SmokePlan) -> None:
    """generation_kwargs win over max_completion_length: a max_new_tokens there is capped too, and a max_time (a
    wall-clock limit, which a busy machine would reach at another token) is dropped."""
    kwargs = dict(config.generation_kwargs or {})
    if not kwargs:
        return
    changed = []
    if isinstance(kwargs.get("max_new_tokens"), int) and kwargs["max_new_tokens"] > COMPLETION_CAP:
        changed.append(f"max_new_tokens capped at {COMPLETION_CAP} (was {kwargs['max_new_tokens']})")
        kwargs["max_new_tokens"] = COMPLETION_CAP
    if "max_time" in kwargs:
        kwargs.pop("max_time")
        changed.append("max_time dropped (a wall-clock limit would stop at another token on a busy machine)")
    if changed:
        plan.overrides["generation_kwargs"] = kwargs
        plan.add("generation_kwargs", SUBSTITUTED, "; ".join(changed))


def written_groups(config, run_plan, plan: SmokePlan, steps: int, reward_names: list[str]) -> None:
    loss = (
        f"{config.loss_type}, epsilon {config.epsilon}"
        + (f"/{config.epsilon_high}" if config.epsilon_high is not None else "")
        + f", importance sampling at {config.importance_sampling_level} level"
    )
    plan.add("loss", EXERCISED, loss)
    if config.beta:
        plan.add("reference model", EXERCISED, f"beta {config.beta}: a frozen reference copy and the KL term")
    else:
        plan.add("reference model", NOT_EXERCISED, "beta 0: the config has no reference model")
    plan.add(
        "schedule",
        EXERCISED,
        f"num_iterations {config.num_iterations}, steps_per_generation "
        f"{run_plan.steps_per_generation}, gradient_accumulation_steps {config.gradient_accumulation_steps}",
    )
    if reward_names:  # none when every reward is a stand-in (stated on its own line)
        plan.add("reward functions", EXERCISED, f"{', '.join(reward_names)} on real generated completions")
    if steps >= 2:
        plan.add(
            "checkpoint save and resume",
            EXERCISED,
            "saved after step 1, resumed for step 2" + (f" to step {steps}" if steps > 2 else ""),
        )
    else:
        plan.add("checkpoint save and resume", NOT_EXERCISED, "--steps 1: saved, never resumed")

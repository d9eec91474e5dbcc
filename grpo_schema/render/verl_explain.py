"""The schedule card of a verl run: TRL's card (per RL step: prompts, completions, optimizer steps, micro-steps per
GPU, off-policy mini-batches, when the LR ticks) in verl's names, each line with the TRL equivalent."""

from __future__ import annotations

from typing import Any


def card_lines(s: dict[str, Any]) -> list[str]:
    if not s.get("complete"):
        return [
            "The schedule needs data.train_batch_size, rollout.n, ppo_mini_batch_size and the GPUs as numbers; "
            "the file leaves some of them to the environment."
        ]
    return _rl_step_lines(s) + _data_parallel_lines(s) + _policy_and_schedule_lines(s)


def _rl_step_lines(s: dict[str, Any]) -> list[str]:
    """What one RL step and one optimizer step take: prompts, completions, optimizer steps."""
    trl = s["trl"]
    lines = [
        "Per RL step (one data.train_batch_size of prompts; TRL: one generation batch):",
        f"  prompts               {s['prompts_per_rl_step']}  (data.train_batch_size: prompts, not samples)",
        f"  completions           {s['samples_per_rl_step']}  = {s['prompts_per_rl_step']} prompts x rollout.n "
        f"{s['group_size']}  (TRL generation_batch_size={trl['generation_batch_size']}, "
        f"num_generations={trl['num_generations']})",
        f"  optimizer steps       {s['optimizer_steps_per_rl_step']}  = {s['mini_batches_per_epoch']} "
        f"mini-batches of {s['mini_batch_prompts']} prompts x ppo_epochs {s['ppo_epochs']}",
    ]
    if s["leftover_prompts"]:
        lines.append(f"  (the last {s['leftover_prompts']} prompts of each RL step fill no whole mini-batch)")
    lines.append(
        f"Per optimizer step: ppo_mini_batch_size {s['mini_batch_prompts']} prompts x rollout.n "
        f"{s['group_size']} = {s['samples_per_optimizer_step']} completions"
    )
    return lines


def _data_parallel_lines(s: dict[str, Any]) -> list[str]:
    """How an optimizer step's completions split over the data-parallel ranks and their micro-steps."""
    trl, dp = s["trl"], s["data_parallel"]
    lines: list[str] = []
    if dp:
        per_rank = s["samples_per_rank_per_optimizer_step"]
        lines.append(
            f"  over {dp} data-parallel ranks ({s['gpus']} GPUs): "
            + (
                f"{per_rank} completions per GPU"
                if per_rank
                else f"{s['samples_per_optimizer_step']} does not split over them (GRPO-Q030)"
            )
        )
        if s["dynamic_batch"]:
            lines.append("  micro-batches: packed by tokens (use_dynamic_bsz), so their number varies")
        elif s["micro_steps_per_optimizer_step"]:
            lines.append(
                f"  micro-steps per GPU   {s['micro_steps_per_optimizer_step']} = {per_rank} / "
                f"ppo_micro_batch_size_per_gpu {s['micro_batch_per_gpu']}  (TRL "
                f"per_device_train_batch_size={trl['per_device_train_batch_size']}, "
                f"gradient_accumulation_steps={trl['gradient_accumulation_steps']})"
            )
        elif per_rank and s["micro_batch_per_gpu"]:
            lines.append(
                f"  {per_rank} completions per GPU is not a multiple of ppo_micro_batch_size_per_gpu "
                f"{s['micro_batch_per_gpu']} (GRPO-Q031)"
            )
    else:
        lines.append("  the GPUs do not split into whole model-parallel groups (GRPO-Q030)")
    return lines


def _policy_and_schedule_lines(s: dict[str, Any]) -> list[str]:
    """On- or off-policy, the LR schedule's ticks, and the TRL equivalent."""
    trl = s["trl"]
    lines: list[str] = []
    if s["off_policy_from_mini_batch"]:
        lines.append(
            f"Off-policy: from the 2nd of the {s['optimizer_steps_per_rl_step']} optimizer steps on, the "
            "policy has moved since generation (the clip ratio acts)"
        )
    else:
        lines.append("On-policy: one optimizer step per RL step (the clip ratio never acts)")
    lines.append(f"LR schedule: ticks {s['lr_ticks']}; warmup and total_training_steps count RL steps")
    if s.get("optimizer_steps_total"):
        lines.append(
            f"  trainer.total_training_steps {s['total_training_steps']} RL steps = "
            f"{s['optimizer_steps_total']} optimizer steps (TRL max_steps={trl['max_steps']})"
        )
    if s.get("lr_warmup_rl_steps"):
        lines.append(f"  lr_warmup_steps {s['lr_warmup_rl_steps']} RL steps = TRL warmup_steps={trl['warmup_steps']}")
    if "steps_per_generation" in trl:
        lines.append(
            f"TRL equivalent at world size {trl['world_size']}: num_generations={trl['num_generations']}, "
            f"per_device_train_batch_size={trl['per_device_train_batch_size']}, "
            f"gradient_accumulation_steps={trl['gradient_accumulation_steps']}, "
            f"steps_per_generation={trl['steps_per_generation']}, num_iterations={trl['num_iterations']}"
        )
    return lines


def render_verl_explain(runs: list[tuple[int, dict[str, Any], list[str]]]) -> str:
    """Each run's card (a script may launch several), headed by its line, with its diagnostics after it."""
    out: list[str] = []
    for line, s, problems in runs:
        if len(runs) > 1:
            out.append(f"== run at line {line}")
        out.extend(card_lines(s))
        out.extend(problems)
        out.append("")
    return "\n".join(out)

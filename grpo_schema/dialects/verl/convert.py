"""TRL <-> verl: the same batch schedule written in the other dialect, every lossy mapping named.

TRL -> verl: rollout.n = num_generations; an optimizer step of per_device_train_batch_size x world size x
gradient_accumulation_steps completions is ppo_mini_batch_size x n, so it must be whole groups (verl's mini-batches
are prompts); train_batch_size = generation_batch_size / n; ppo_micro_batch_size_per_gpu = per_device_train_batch_size;
ppo_epochs = num_iterations; the GPUs = the world size (pure data parallel, rollout TP 1); max_steps and warmup_steps
become RL steps. verl -> TRL is the inverse. A conversion that cannot keep the schedule is refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grpo_schema.dialects.verl.config import REF, A, R, VerlConfig

# TRL loss_type -> verl actor.loss_agg_mode (the aggregation each normalises by; the losses differ otherwise)
LOSS_TO_VERL = {
    "grpo": "seq-mean-token-mean",
    "bnpo": "token-mean",
    "dapo": "token-mean",
    "dr_grpo": "seq-mean-token-sum-norm",
}
LOSS_TO_TRL = {"seq-mean-token-mean": "grpo", "token-mean": "dapo", "seq-mean-token-sum-norm": "dr_grpo"}


@dataclass
class Conversion:
    settings: dict[str, Any] = field(default_factory=dict)  # verl overrides, or TRL keys
    lossy: list[str] = field(default_factory=list)  # each mapping that does not keep the exact meaning
    refused: str = ""  # why there is no equivalent (then settings is empty)

    @property
    def ok(self) -> bool:
        return not self.refused


def trl_to_verl(config: Any, world_size: int) -> Conversion:
    """A validated TRL config (ConfigView) at its world size -> verl overrides."""
    g, pdb = int(config.num_generations), int(config.per_device_train_batch_size)
    ga = int(config.gradient_accumulation_steps)
    steps = int(config.steps_per_generation or 0) or (
        int(config.generation_batch_size) // (pdb * world_size) if config.generation_batch_size else ga
    )
    per_step = pdb * world_size * ga
    if per_step % g:
        return Conversion(
            refused=f"a TRL optimizer step is per_device_train_batch_size x world size x "
            f"gradient_accumulation_steps = {pdb} x {world_size} x {ga} = {per_step} "
            f"completions, not whole groups of num_generations {g}: verl's mini-batches "
            "are whole prompts"
        )
    if steps % ga:
        return Conversion(
            refused=f"steps_per_generation ({steps}) is not a multiple of gradient_accumulation_steps "
            f"({ga}): the generation batch does not split into whole optimizer steps, which "
            "verl's mini-batches must"
        )
    mini = per_step // g
    prompts = pdb * world_size * steps // g
    out = Conversion()
    s = out.settings
    s.update(
        {
            "algorithm.adv_estimator": "grpo",
            "data.train_batch_size": prompts,
            R + "n": g,
            A + "ppo_mini_batch_size": mini,
            A + "ppo_micro_batch_size_per_gpu": pdb,
            A + "ppo_epochs": int(config.num_iterations),
            "trainer.n_gpus_per_node": world_size,
            "trainer.nnodes": 1,
            R + "tensor_model_parallel_size": 1,
            R + "log_prob_micro_batch_size_per_gpu": pdb,
            REF + "log_prob_micro_batch_size_per_gpu": pdb,
        }
    )
    out.lossy.append(
        "the log-prob micro-batches (rollout and ref) are set to per_device_train_batch_size; TRL has no field for them"
    )
    _training(config, prompts // mini * int(config.num_iterations), out)
    _loss(config, out)
    _sampling(config, out)
    return out


def _training(config: Any, optimizer_steps_per_rl_step: int, out: Conversion) -> None:
    s = out.settings
    s[A + "optim.lr"] = float(config.learning_rate)
    if config.max_steps and int(config.max_steps) > 0:
        total, rest = divmod(int(config.max_steps), optimizer_steps_per_rl_step)
        s["trainer.total_training_steps"] = total + (1 if rest else 0)
        if rest:
            out.lossy.append(
                f"max_steps {config.max_steps} is not a whole number of RL steps "
                f"({optimizer_steps_per_rl_step} optimizer steps each): rounded up"
            )
    warmup = int(getattr(config, "warmup_steps", 0) or 0)
    if warmup > 0:
        rl, rest = divmod(warmup, optimizer_steps_per_rl_step)
        s[A + "optim.lr_warmup_steps"] = rl + (1 if rest else 0)
        if rest:
            out.lossy.append(
                f"warmup_steps {warmup} is not a whole number of RL steps: rounded up (the LR ticks "
                "once per RL step in verl)"
            )
    if getattr(config, "model_name_or_path", None):
        s["actor_rollout_ref.model.path"] = config.model_name_or_path
    if getattr(config, "reward_funcs", None):
        out.lossy.append(
            f"reward_funcs {list(config.reward_funcs)} have no verl field: verl takes one "
            "custom_reward_function (reward.custom_reward_function.path/name)"
        )


def _loss(config: Any, out: Conversion) -> None:
    s = out.settings
    beta = float(config.beta or 0)
    s[A + "use_kl_loss"] = beta > 0
    if beta > 0:
        s[A + "kl_loss_coef"] = beta
        s[A + "kl_loss_type"] = "low_var_kl"
        out.lossy.append("beta -> use_kl_loss + kl_loss_coef with kl_loss_type low_var_kl (TRL's k3 estimator)")
    loss_type = str(config.loss_type)
    if loss_type in LOSS_TO_VERL:
        s[A + "loss_agg_mode"] = LOSS_TO_VERL[loss_type]
        out.lossy.append(f"loss_type {loss_type} -> loss_agg_mode {LOSS_TO_VERL[loss_type]} (the aggregation only)")
    else:
        out.lossy.append(f"loss_type {loss_type} has no verl aggregation: verl's default token-mean is kept")
    s[A + "clip_ratio_low"] = float(config.epsilon)
    s[A + "clip_ratio_high"] = float(config.epsilon_high if config.epsilon_high is not None else config.epsilon)
    scale = str(config.scale_rewards).lower()
    s["algorithm.norm_adv_by_std_in_grpo"] = scale not in ("none", "false")
    if scale == "batch":
        out.lossy.append("scale_rewards batch -> norm_adv_by_std_in_grpo (verl scales by the group's std only)")


def _sampling(config: Any, out: Conversion) -> None:
    s = out.settings
    s[R + "temperature"] = float(config.temperature)
    s[R + "top_p"] = float(config.top_p)
    prompt_length = getattr(config, "max_prompt_length", None)  # TRL 1.x has none: verl's default is kept
    if prompt_length is not None:
        s["data.max_prompt_length"] = int(prompt_length)
    else:
        out.lossy.append(
            "TRL does not cap prompts here: verl's data.max_prompt_length default is kept (longer "
            "prompts are refused by verl's dataset)"
        )
    s["data.max_response_length"] = int(config.max_completion_length)


def verl_to_trl(config: VerlConfig) -> Conversion:
    """A verl config -> TRL keys (with num_processes for the world size)."""
    from grpo_schema.dialects.verl.schedule import schedule

    sched = schedule(config)
    if not sched.get("complete"):
        return Conversion(refused="the batch sizes or GPUs are not all known numbers")
    if config.dynamic:
        return Conversion(refused="use_dynamic_bsz packs micro-batches by tokens: TRL has no per-device batch to match")
    if config.model_parallel * config.sequence_parallel > 1:
        return Conversion(
            refused="TRL's schedule is pure data parallel; this run splits the model (Megatron TP x PP "
            "x CP or Ulysses SP)"
        )
    if sched["leftover_prompts"] or not sched["micro_steps_per_optimizer_step"]:
        return Conversion(
            refused="the mini-batches do not split the RL step, or the micro-batches a rank's share, "
            "into whole parts (see grpo validate)"
        )
    trl = sched["trl"]
    out = Conversion()
    s = out.settings
    s.update(
        {
            "num_generations": trl["num_generations"],
            "per_device_train_batch_size": trl["per_device_train_batch_size"],
            "gradient_accumulation_steps": trl["gradient_accumulation_steps"],
            "steps_per_generation": trl["steps_per_generation"],
            "num_iterations": trl["num_iterations"],
            "num_processes": trl["world_size"],
        }
    )
    if "max_steps" in trl:
        s["max_steps"] = trl["max_steps"]
    if "warmup_steps" in trl:
        s["warmup_steps"] = trl["warmup_steps"]
    _verl_loss_to_trl(config, out)
    for name, lost in (
        ("the rollout's tensor parallel size", config[R + "tensor_model_parallel_size"] != 1),
        ("the log-prob micro-batch size", True),
        ("DAPO's group filter (algorithm.filter_groups)", bool(config["algorithm.filter_groups.enable"])),
        ("actor.shuffle", bool(config[A + "shuffle"])),
    ):
        if lost:
            out.lossy.append(f"{name}: no TRL field, dropped")
    return out


def _verl_loss_to_trl(config: VerlConfig, out: Conversion) -> None:
    s = out.settings
    s["learning_rate"] = float(config[A + "optim.lr"])
    s["beta"] = float(config[A + "kl_loss_coef"]) if config[A + "use_kl_loss"] else 0.0
    if config[A + "use_kl_loss"] and config[A + "kl_loss_type"] != "low_var_kl":
        out.lossy.append(f"kl_loss_type {config[A + 'kl_loss_type']} -> beta (TRL's k3 estimator)")
    mode = config[A + "loss_agg_mode"]
    s["loss_type"] = LOSS_TO_TRL.get(mode, "dapo")
    out.lossy.append(f"loss_agg_mode {mode} -> loss_type {s['loss_type']} (the aggregation only)")
    s["epsilon"] = float(config[A + "clip_ratio_low"])
    s["epsilon_high"] = float(config[A + "clip_ratio_high"])
    s["scale_rewards"] = "group" if config["algorithm.norm_adv_by_std_in_grpo"] else "none"
    s["temperature"] = float(config[R + "temperature"])
    s["top_p"] = float(config[R + "top_p"])
    out.lossy.append(
        f"data.max_prompt_length {config['data.max_prompt_length']} has no TRL field (TRL keeps whole prompts): dropped"
    )
    s["max_completion_length"] = int(config["data.max_response_length"])
    path = config["actor_rollout_ref.model.path"]
    if isinstance(path, str) and not path.startswith("~"):
        s["model_name_or_path"] = path


def verl_script(conversion: Conversion) -> str:
    """A runnable launch script: the overrides one a line, the lossy mappings as comments above."""
    lines = ["#!/usr/bin/env bash", "# Converted by grpo convert --to verl."]
    lines += [f"# lossy: {item}" for item in conversion.lossy]
    body = [f"{key}={_text(value)}" for key, value in conversion.settings.items()]
    lines.append(" \\\n    ".join(["python3 -m verl.trainer.main_ppo", *body]) + ' "$@"')
    return "\n".join(lines) + "\n"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return f"'{text}'" if any(c in text for c in " $\"'") else text


def trl_yaml(conversion: Conversion) -> str:
    from grpo_schema.engine.diagnostics import yaml_value

    lines = ["# Converted by grpo convert --to trl."] + [f"# lossy: {item}" for item in conversion.lossy]
    lines += [f"{key}: {_yaml_number(value) or yaml_value(value)}" for key, value in conversion.settings.items()]
    return "\n".join(lines) + "\n"


def _yaml_number(value: Any) -> str:
    """A float as YAML 1.1 reads it back as a float: PyYAML takes 1e-06 for a string, 1.0e-06 for a number."""
    if isinstance(value, float) and "e" in repr(value) and "." not in repr(value).split("e")[0]:
        mantissa, exponent = repr(value).split("e")
        return f"{mantissa}.0e{exponent}"
    return ""

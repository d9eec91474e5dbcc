"""Building everything a run needs from the validated config and its plan, once, before the loop.

`build_parts` fills a `training.parts.Parts` record (the built objects); the loop in `train.py` reads from it.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import torch

import grpo_runtime.distributed.sharding as sharding
from grpo_runtime.data.datasets import load_prompts
from grpo_runtime.data.rewards import RewardModel, resolve_reward_func, reward_name
from grpo_runtime.distributed.accelerate import accelerator_settings
from grpo_runtime.distributed.precision import mixed_precision
from grpo_runtime.generation.backends import build_backend
from grpo_runtime.generation.rollout import eos_token_ids, generation_config
from grpo_runtime.model.loading import (
    checkpointing_settings,
    load_policy,
    load_reference,
    load_tokenizer,
    router_loss_coefficient,
)
from grpo_runtime.support import CannotRun, enforce
from grpo_runtime.training.loss import LossSettings
from grpo_runtime.training.optim import build_optimizer, build_scheduler
from grpo_runtime.training.parts import Parts
from grpo_runtime.training.sampler import PromptOrder, total_steps


def output_dir(config) -> Path:
    return Path(config.output_dir or "trainer_output").expanduser()


def build_reward_funcs(config, device, script=None) -> list:
    import grpo_runtime.data.open_r1 as open_r1

    funcs = []
    if config.reward_model_name_or_path:
        funcs.append(
            RewardModel(
                config.reward_model_name_or_path, device, config.chat_template_kwargs, **reward_model_kwargs(config)
            )
        )
    if script is not None and script[0] == "open-r1":
        return funcs + open_r1.reward_funcs(config, script[1])  # open-r1 resolves names in its own registry
    funcs += [resolve_reward_func(name) for name in config.reward_funcs or []]
    if not funcs:
        raise CannotRun("no reward: set reward_funcs and/or reward_model_name_or_path")
    return funcs


def reward_model_kwargs(config) -> dict:
    """How `trl grpo` loads a reward model: with the policy's dtype, attention, trust_remote_code and
    model_init_kwargs. Not with the policy's model_revision (TRL passes it on too, but a revision names a commit of
    the policy's repository, not of the reward model's), and never quantised."""
    from grpo_runtime.model.loading import load_kwargs

    kwargs = load_kwargs(config)
    kwargs.pop("revision", None)
    kwargs.pop("quantization_config", None)
    return kwargs


def reward_weights(config, count: int) -> torch.Tensor:
    if config.reward_weights is None:
        return torch.ones(count)
    if len(config.reward_weights) != count:
        raise CannotRun(f"reward_weights has {len(config.reward_weights)} values for {count} reward functions")
    return torch.tensor(config.reward_weights, dtype=torch.float32)


def new_accelerator(config, plan=None):
    """An Accelerator for this run, built as the HF trainer builds TRL's: DDP options, the process group's backend
    and timeout, accelerator_config's dataloader settings and gradient_accumulation_kwargs, and the FSDP /
    DeepSpeed plugin the config asks for. accelerate keeps its settings in a process-wide singleton; a
    single-process caller (tests, a service) may run several configs one after another, so they are cleared first."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState, GradientState

    if int(os.environ.get("WORLD_SIZE", "1")) == 1:
        AcceleratorState._reset_state(reset_partial_state=True)
        GradientState._reset_state()
    plugins = sharding.accelerator_plugins(config, plan) if plan is not None else {}
    accelerator = Accelerator(
        mixed_precision=mixed_precision(config), cpu=sharding.cpu_flag(config), **accelerator_options(config), **plugins
    )
    sharding.shard_on_cpu(accelerator, plugins)
    sharding.deepspeed_on_cpu(accelerator)
    if plan is not None:
        sharding.complete_launcher_plugin(accelerator, config, plan)
    return accelerator


def accelerator_options(config) -> dict:
    from accelerate.utils import (
        DataLoaderConfiguration,
        DistributedDataParallelKwargs,
        GradientAccumulationPlugin,
        InitProcessGroupKwargs,
    )

    find_unused = config.ddp_find_unused_parameters
    if find_unused is None:  # the HF trainer's default: unused-parameter search breaks activation checkpointing
        find_unused = not checkpointing_settings(config)[0]
    ddp = {"find_unused_parameters": find_unused}
    for name in ("bucket_cap_mb", "broadcast_buffers", "static_graph"):
        if getattr(config, f"ddp_{name}") is not None:
            ddp[name] = getattr(config, f"ddp_{name}")
    group = {"timeout": timedelta(seconds=config.ddp_timeout)}
    if config.ddp_backend is not None:
        group["backend"] = config.ddp_backend
    settings = accelerator_settings(config)
    loading = {
        k: settings[k]
        for k in ("split_batches", "dispatch_batches", "even_batches", "use_seedable_sampler", "non_blocking")
        if k in settings
    }
    accumulation = {k: v for k, v in (settings.get("gradient_accumulation_kwargs") or {}).items() if k != "num_steps"}
    return dict(
        kwargs_handlers=[DistributedDataParallelKwargs(**ddp), InitProcessGroupKwargs(**group)],
        dataloader_config=DataLoaderConfiguration(**loading),
        # the loop accumulates itself (micro-steps per window), as the HF trainer tells accelerate
        gradient_accumulation_plugin=GradientAccumulationPlugin(num_steps=1, **accumulation),
    )


def seed_everything(config, seed: int) -> None:
    """seed (or full_determinism: deterministic algorithms too, as the HF trainer) and tf32."""
    from accelerate.utils import set_seed
    from transformers.trainer_utils import enable_full_determinism

    enable_full_determinism(seed) if config.full_determinism else set_seed(seed)
    if config.tf32 is not None and torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = config.tf32
        torch.backends.cudnn.allow_tf32 = config.tf32


def prompts(config, open_r1_args, split: str = "train"):
    if open_r1_args is None:
        return load_prompts(config, split)
    import grpo_runtime.data.open_r1 as open_r1

    return open_r1.load_prompts(config, open_r1_args, split)


def build_parts(config, plan, assessed: bool = False, launch: dict | None = None, script=None) -> Parts:
    """`assessed`: the caller has already checked the config against the field table (grpo_runtime.support) and
    reported its warnings; otherwise refusals raise CannotRun here, before anything loads."""
    from accelerate.utils import set_seed

    # refusals (the field table's and the training script's) raise CannotRun before anything loads
    enforce(config, plan.world_size, launch, warn=not assessed, script=script)
    accelerator = new_accelerator(config, plan)
    seed_everything(config, config.seed)  # before the model, so LoRA adapters start the same on every run
    tokenizer = load_tokenizer(config)
    open_r1_args = script[1] if script is not None and script[0] == "open-r1" else None
    if open_r1_args is not None:
        import grpo_runtime.data.open_r1 as open_r1

        open_r1.apply_tokenizer_settings(tokenizer, open_r1_args)
    policy = load_policy(config, tokenizer).train()  # train mode throughout, generation included, as in TRL
    reference = load_reference(config, policy)
    dataset = prompts(config, open_r1_args)
    eval_dataset = prompts(config, open_r1_args, "test") if config.eval_strategy != "no" else None
    steps = total_steps(len(dataset), plan, config.max_steps, config.num_train_epochs)
    optimizer = build_optimizer(policy, config)
    scheduler = build_scheduler(optimizer, config, steps)
    model, optimizer = accelerator.prepare(policy, optimizer)
    # after the policy: accelerate has filled the DeepSpeed config's remaining "auto" values, which the reference's
    # engine (ZeRO-3) starts from
    reference = sharding.prepare_reference(accelerator, reference)
    funcs = build_reward_funcs(config, accelerator.device, script)
    eos_ids = eos_token_ids(tokenizer, policy)
    parts = Parts(
        accelerator=accelerator,
        model=model,
        policy=accelerator.unwrap_model(model),
        reference=reference,
        tokenizer=tokenizer,
        optimizer=optimizer,
        scheduler=scheduler,
        dataset=dataset,
        eval_dataset=eval_dataset,
        order=PromptOrder(len(dataset), plan.prompts_per_generation, config.shuffle_dataset, config.seed),
        reward_funcs=funcs,
        reward_names=[reward_name(f) for f in funcs],
        reward_weights=reward_weights(config, len(funcs)),
        generation_config=generation_config(config, tokenizer, eos_ids),
        eos_ids=eos_ids,
        loss_settings=LossSettings.from_config(config, plan),
        router_loss_coef=router_loss_coefficient(config, policy),
        total_steps=steps,
        output_dir=output_dir(config),
    )
    parts.backend = build_backend(config, plan, parts)
    set_seed(config.seed + accelerator.process_index)  # each process samples differently, as in TRL
    return parts

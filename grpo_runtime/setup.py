"""Building everything a run needs from the validated config and its plan, once, before the loop.

`Parts` is a plain record of the built objects (no behaviour beyond small accessors); the loop in `train.py`
reads from it and keeps its counters in `checkpoint.Progress`.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from .data import load_prompts
from .generation import build_backend
from .loss import LossSettings
from .model import load_policy, load_reference, load_tokenizer, reference_context, router_loss_coefficient
from .optim import build_optimizer, build_scheduler
from .precision import mixed_precision
from .rewards import RewardModel, resolve_reward_func, reward_name
from .rollout import eos_token_ids, generation_config
from .sampler import PromptOrder, total_steps

def vllm_missing(config) -> bool:
    """The engine (colocate) or the NCCL weight push (server mode with CUDA) needs vllm here; a CPU trainer talks
    to a server over HTTP alone."""
    import importlib.util

    needs = config.vllm_mode == "colocate" or (not config.use_cpu and torch.cuda.is_available())
    return config.use_vllm and needs and importlib.util.find_spec("vllm") is None


UNSUPPORTED: list[tuple[Callable, str]] = [
    (vllm_missing, "use_vllm: true needs the vllm package, which is not installed here; install the `vllm` extra "
                   "(pip install 'grpo-config[runtime,vllm]'; CPU-only machines: scripts/setup-vllm.sh) or set "
                   "use_vllm: false"),
    (lambda c: c.use_transformers_continuous_batching, "use_transformers_continuous_batching is not supported"),
    (lambda c: c.save_strategy == "best" or c.load_best_model_at_end,
     "choosing the best checkpoint (save_strategy: best, load_best_model_at_end) is not supported yet"),
    (lambda c: c.push_to_hub, "push_to_hub is not supported by grpo_runtime; upload output_dir yourself"),
]
# Speed-only options: the numbers are the same without them, so the run goes ahead with a warning.
IGNORED: list[tuple[Callable, str]] = [
    (lambda c: c.torch_compile, "torch_compile is ignored by grpo_runtime (the model runs eagerly)"),
    (lambda c: c.use_liger_kernel, "use_liger_kernel is ignored by grpo_runtime (no Liger kernels are applied)"),
]


class UnsupportedConfig(ValueError):
    """The config is valid for TRL but uses something grpo_runtime does not run; refused before anything starts."""


def refuse_unsupported(config) -> None:
    problems = [message for applies, message in UNSUPPORTED if applies(config)]
    if problems:
        raise UnsupportedConfig("this config uses features grpo_runtime does not run:\n  - " + "\n  - ".join(problems))
    for applies, message in IGNORED:
        if applies(config):
            warnings.warn(message, stacklevel=2)


def output_dir(config) -> Path:
    return Path(config.output_dir or "trainer_output").expanduser()


@dataclass
class Parts:
    accelerator: object
    model: torch.nn.Module  # prepared (DDP-wrapped when distributed): use for the training forward
    policy: torch.nn.Module  # the same model unwrapped: generation and no-grad scoring
    reference: torch.nn.Module | None
    tokenizer: object
    optimizer: object
    scheduler: object
    dataset: object
    eval_dataset: object | None  # the test split, when eval_strategy is not "no"
    order: PromptOrder
    reward_funcs: list
    reward_names: list[str]
    reward_weights: torch.Tensor  # [K]
    generation_config: object
    eos_ids: list[int]
    loss_settings: LossSettings
    router_loss_coef: float  # MoE load-balancing loss weight; 0 for dense models
    total_steps: int
    output_dir: Path
    backend: object = None  # generation.Backend: transformers, vllm-colocate or vllm-server

    @property
    def rank(self) -> int:
        return self.accelerator.process_index

    @property
    def device(self):
        return self.accelerator.device

    def gather(self, tensor: torch.Tensor) -> torch.Tensor:
        return self.accelerator.gather(tensor)

    def gather_object(self, objects: list) -> list:
        from accelerate.utils import gather_object

        return gather_object(objects) if self.accelerator.num_processes > 1 else objects

    def autocast(self):
        return self.accelerator.autocast()

    def reference_context(self):
        model, context = reference_context(self.policy, self.reference)

        @contextlib.contextmanager
        def entered():
            with context:
                yield model

        return entered()


def build_reward_funcs(config, device) -> list:
    funcs = []
    if config.reward_model_name_or_path:
        funcs.append(RewardModel(config.reward_model_name_or_path, device, config.chat_template_kwargs))
    funcs += [resolve_reward_func(name) for name in config.reward_funcs or []]
    if not funcs:
        raise ValueError("no reward: set reward_funcs and/or reward_model_name_or_path")
    return funcs


def reward_weights(config, count: int) -> torch.Tensor:
    if config.reward_weights is None:
        return torch.ones(count)
    if len(config.reward_weights) != count:
        raise ValueError(f"reward_weights has {len(config.reward_weights)} values for {count} reward functions")
    return torch.tensor(config.reward_weights, dtype=torch.float32)


def new_accelerator(config):
    """An Accelerator for this run. accelerate keeps its settings in a process-wide singleton; a single-process
    caller (tests, a service) may run several configs one after another, so their settings are cleared first."""
    import os

    from accelerate import Accelerator
    from accelerate.state import AcceleratorState, GradientState

    if int(os.environ.get("WORLD_SIZE", "1")) == 1:
        AcceleratorState._reset_state(reset_partial_state=True)
        GradientState._reset_state()
    return Accelerator(mixed_precision=mixed_precision(config), cpu=config.use_cpu)


def build_parts(config, plan) -> Parts:
    from accelerate.utils import set_seed

    refuse_unsupported(config)
    accelerator = new_accelerator(config)
    set_seed(config.seed)  # before the model, so LoRA adapters start the same on every run
    tokenizer = load_tokenizer(config)
    policy = load_policy(config, tokenizer).train()  # train mode throughout, generation included, as in TRL
    reference = load_reference(config, policy)
    if reference is not None:
        reference.to(accelerator.device)
    dataset = load_prompts(config)
    eval_dataset = load_prompts(config, "test") if config.eval_strategy != "no" else None
    steps = total_steps(len(dataset), plan, config.max_steps, config.num_train_epochs)
    optimizer = build_optimizer(policy, config)
    scheduler = build_scheduler(optimizer, config, steps)
    model, optimizer = accelerator.prepare(policy, optimizer)
    funcs = build_reward_funcs(config, accelerator.device)
    eos_ids = eos_token_ids(tokenizer, policy)
    parts = Parts(
        accelerator=accelerator, model=model, policy=accelerator.unwrap_model(model), reference=reference,
        tokenizer=tokenizer, optimizer=optimizer, scheduler=scheduler, dataset=dataset, eval_dataset=eval_dataset,
        order=PromptOrder(len(dataset), plan.prompts_per_generation, config.shuffle_dataset, config.seed),
        reward_funcs=funcs, reward_names=[reward_name(f) for f in funcs], reward_weights=reward_weights(config,
        len(funcs)), generation_config=generation_config(config, tokenizer, eos_ids), eos_ids=eos_ids,
        loss_settings=LossSettings.from_config(config, plan), router_loss_coef=router_loss_coefficient(config, policy),
        total_steps=steps, output_dir=output_dir(config),
    )
    parts.backend = build_backend(config, plan, parts)
    set_seed(config.seed + accelerator.process_index)  # each process samples differently, as in TRL
    return parts

"""`Parts`: the record of everything a run built before its loop (setup.build_parts fills it once).

A plain record with a few accessors; the loop (train.py), evaluation and the step functions read from it and keep
their counters in outputs.checkpoint.Progress.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import torch

from grpo_runtime.model.loading import reference_context
from grpo_runtime.training.loss import LossSettings
from grpo_runtime.training.sampler import PromptOrder


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

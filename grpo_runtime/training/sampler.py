"""Which prompts each process trains on, and on which micro-step: the order `trl grpo` uses.

TRL builds this order from three pieces: a RepeatSampler (a seeded permutation per epoch, cut into chunks of
`U = generation_batch_size / num_generations` prompts, each prompt repeated `num_generations` times and each chunk
repeated `steps_per_generation * num_iterations` times), accelerate's batch sharding (batch `k` of `b * s` rows goes
to rank `k mod P`), and the trainer's buffer, which generates only on micro-steps `n = 0 (mod s * mu)` and ignores
the duplicate batches in between. The pieces cancel out into a simpler rule, which is what this module computes:

    generation k uses chunk k of the prompt order; process p takes rows [p*b*s, (p+1)*b*s) of the chunk
    expanded with every prompt repeated num_generations times in a row.

`tests/runtime/test_sampler_oracle.py` checks that rule against TRL's RepeatSampler and accelerate's sharding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

from grpo_runtime.common import CannotRun


class PromptOrder:
    """Dataset indices in the order generations consume them, epoch after epoch.

    Epoch `e` is the `(e+1)`-th `torch.randperm` drawn from one `torch.Generator` seeded with `seed` (the same on
    every process), or `0..N-1` without shuffling. Each epoch is cut into `N // U` chunks of `U` prompts; the short
    remainder is skipped for that epoch. The order is a pure function of `(seed, epoch)`, so a resumed run rebuilds
    it from the generation index alone.
    """

    def __init__(self, num_prompts: int, prompts_per_generation: int, shuffle: bool, seed: int):
        if num_prompts < prompts_per_generation:
            raise CannotRun(
                f"the training set has {num_prompts} prompts but one generation needs {prompts_per_generation} "
                f"distinct prompts (generation_batch_size / num_generations); add prompts or shrink the batch"
            )
        self.num_prompts = num_prompts
        self.chunk_size = prompts_per_generation
        self.shuffle = shuffle
        self.seed = seed
        self.generations_per_epoch = num_prompts // prompts_per_generation
        self._generator = None
        self._epoch = -1
        self._permutation: list[int] = []

    def chunk(self, generation: int) -> list[int]:
        """The `U` dataset indices of generation number `generation` (0-based, counted over the whole run)."""
        epoch, position = divmod(generation, self.generations_per_epoch)
        permutation = self._epoch_permutation(epoch)
        return permutation[position * self.chunk_size : (position + 1) * self.chunk_size]

    def _epoch_permutation(self, epoch: int) -> list[int]:
        import torch

        if not self.shuffle:
            return list(range(self.num_prompts))
        if epoch < self._epoch:  # going backwards (never in training): replay the draws from the start
            self._generator, self._epoch = None, -1
        if self._generator is None:
            self._generator = torch.Generator().manual_seed(self.seed)
        while self._epoch < epoch:
            self._permutation = torch.randperm(self.num_prompts, generator=self._generator).tolist()
            self._epoch += 1
        return self._permutation


def process_rows(chunk: list[int], num_generations: int, rank: int, rows: int) -> list[int]:
    """The dataset index of each row process `rank` generates for, given the chunk of this generation.

    A group of `num_generations` copies may straddle two processes when `rows` is not a multiple of it; the
    rewards are gathered before advantages are computed, so that is harmless.
    """
    expanded = [index for index in chunk for _ in range(num_generations)]
    return expanded[rank * rows : (rank + 1) * rows]


@dataclass(frozen=True)
class Window:
    """One optimizer step: the micro-steps whose gradients it accumulates."""

    step: int  # global step reached after this window (1-based)
    epoch: int  # 0-based epoch the window belongs to
    micro_steps: range  # global micro-step indices (TRL's `_step`), contiguous
    epoch_progress: float  # fractional epoch count after the window, as the HF trainer logs it
    starts_epoch: bool = False  # the first window of its epoch


def micro_steps_per_epoch(num_prompts: int, plan) -> int:
    """Micro-steps each process runs per epoch: one per repeated sampler batch, `(N // U) * s * mu`."""
    return (num_prompts // plan.prompts_per_generation) * plan.generate_every_micro_steps


def steps_per_epoch(num_prompts: int, plan) -> int:
    """Optimizer steps per epoch; the last window of an epoch may hold fewer than GA micro-steps."""
    return max(math.ceil(micro_steps_per_epoch(num_prompts, plan) / plan.gradient_accumulation_steps), 1)


def total_steps(num_prompts: int, plan, max_steps: int, num_train_epochs: float) -> int:
    """`max_steps` when positive, else `ceil(num_train_epochs * steps_per_epoch)`, as the HF trainer decides."""
    if max_steps > 0:
        return max_steps
    return math.ceil(num_train_epochs * steps_per_epoch(num_prompts, plan))


def optimizer_windows(num_prompts: int, plan, last_step: int, start_step: int = 0) -> Iterator[Window]:
    """The optimizer windows from `start_step + 1` to `last_step`.

    Like the HF trainer, each epoch is cut into windows of `gradient_accumulation_steps` micro-steps and its last
    window keeps the remainder (`current_gradient_accumulation_steps` is then smaller). Micro-step indices keep
    counting across epochs; an epoch's micro-step count is a multiple of `s * mu`, so generations never straddle
    epochs.
    """
    per_epoch = micro_steps_per_epoch(num_prompts, plan)
    accumulation = plan.gradient_accumulation_steps
    windows_per_epoch = steps_per_epoch(num_prompts, plan)
    for step in range(start_step + 1, last_step + 1):
        epoch, index = divmod(step - 1, windows_per_epoch)
        first = epoch * per_epoch + index * accumulation
        last = min(first + accumulation, (epoch + 1) * per_epoch)
        yield Window(step, epoch, range(first, last), epoch + (last - epoch * per_epoch) / per_epoch, index == 0)

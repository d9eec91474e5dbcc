"""The first micro-steps of a run, process by process, as TRL 1.16 executes them (grpo-runtime.md §2.1-2.3).

A pure walk over a RunPlan. Three mechanisms meet here:
- the RepeatSampler shuffles the prompt order once per epoch (a torch.Generator seeded once with `seed`), cuts it
  into chunks of U = prompts_per_generation prompts (dropping a short remainder), and emits each chunk
  s * mu times (steps_per_generation x num_iterations), every prompt num_generations times in a row;
- accelerate cuts that stream into dataloader batches of b * s rows and hands batch k to process k mod P, so each
  emission of a chunk gives every process one batch: process p holds rows [p*b*s, (p+1)*b*s) of the chunk;
- the trainer generates only on micro-steps n = 0 (mod s * mu) and trains the next s * mu micro-steps on slices
  of that buffer; the dataloader batches fetched in between are identical copies, and it ignores them (the walk
  lists a batch's prompts where it is used, and names the micro-step it copies where it is skipped).

Prompts are named by their *position* in the epoch's shuffled order (0-based here, "#1" in text), because the
permutation itself needs torch (grpo_schema never imports it). Pass `order` (epoch -> permutation, e.g. from
grpo_runtime's PromptOrder) to get dataset indices as well.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

from grpo_schema.engine.plan import RunPlan

Order = Callable[[int], Sequence[int]]  # epoch -> the dataset indices in that epoch's order
DEFAULT_GENERATIONS = 2
MAX_MICRO_STEPS = 256
MAX_LISTED = 20_000  # process batches + prompt entries one walk lists: bounds its time and the explain JSON


@dataclass(frozen=True)
class PromptRows:
    position: int  # 0-based position in the epoch's (shuffled) prompt order
    copies: int  # rows of this prompt in the batch (num_generations, or fewer where a group straddles processes)
    index: int | None = None  # dataset index, when an order was given


@dataclass(frozen=True)
class ProcessBatch:
    rank: int
    sampler_batch: int  # which dataloader batch of the epoch this process receives (k -> rank k mod P)
    prompts: tuple[PromptRows, ...]  # listed where the batch is used; a skipped copy lists none (see copy_of)
    used: bool  # False: a repeat of the batch the buffer was generated from, ignored by the trainer


@dataclass(frozen=True)
class MicroStep:
    micro_step: int  # 0-based, counted over the run (TRL's `_step`)
    epoch: int  # 0-based
    generation: int  # 0-based, counted over the run
    chunk: int  # which chunk of the epoch's order the buffer holds
    iteration: int  # 1..num_iterations: the pass over the buffer
    buffer_slice: int  # 0..steps_per_generation-1: the slice of b rows each process trains on
    generates: bool
    optimizer_step: int | None  # the optimizer step this micro-step completes (global_step after it), else None
    window: int  # micro-steps accumulated into that optimizer step
    copy_of: int | None  # the generating micro-step whose sampler batches these repeat (None when generating)
    processes: tuple[ProcessBatch, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def process_rows(plan: RunPlan, chunk: int, rank: int) -> list[int]:
    """The epoch position of each of the b*s rows process `rank` holds when the buffer holds chunk `chunk`."""
    rows, G = plan.sampler_batch_size, plan.num_generations
    first = chunk * plan.prompts_per_generation
    return [first + j // G for j in range(rank * rows, (rank + 1) * rows)]


def _runs(positions: list[int], permutation: Sequence[int] | None) -> tuple[PromptRows, ...]:
    runs: list[list[int]] = []
    for position in positions:
        if runs and runs[-1][0] == position:
            runs[-1][1] += 1
        else:
            runs.append([position, 1])
    return tuple(PromptRows(p, n, permutation[p] if permutation is not None else None) for p, n in runs)


def micro_steps_per_epoch(plan: RunPlan) -> int | None:
    return plan.micro_steps_per_epoch if plan.dataset_size is not None else None


def default_length(plan: RunPlan, generations: int = DEFAULT_GENERATIONS) -> int:
    """Enough micro-steps for `generations` generations and at least one optimizer step."""
    return min(max(generations * plan.generate_every_micro_steps, plan.gradient_accumulation_steps), MAX_MICRO_STEPS)


def walk(plan: RunPlan, micro_steps: int | None = None, order: Order | None = None) -> list[MicroStep]:
    """The first `micro_steps` micro-steps (default: `default_length`), stopping where training would stop."""
    count = default_length(plan) if micro_steps is None else min(micro_steps, MAX_MICRO_STEPS)
    per_epoch = micro_steps_per_epoch(plan)
    if per_epoch == 0:  # fewer prompts than one generation needs: the sampler yields nothing
        return []
    out, listed = [], 0
    for n in range(count):
        listed += _listing_size(plan, n, per_epoch)
        if listed > MAX_LISTED:  # a huge batch or world size: list fewer micro-steps, not millions of rows
            break
        step = _micro_step(plan, n, per_epoch, order)
        out.append(step)
        if plan.total_optimizer_steps is not None and step.optimizer_step == plan.total_optimizer_steps:
            break
    return out


def _listing_size(plan: RunPlan, n: int, per_epoch: int | None) -> int:
    """Process batches plus (at most) the prompt entries micro-step n lists."""
    local = n % per_epoch if per_epoch else n
    generates = local % plan.generate_every_micro_steps == 0
    return plan.world_size * (1 + (plan.sampler_batch_size // plan.num_generations + 2 if generates else 0))


def _micro_step(plan: RunPlan, n: int, per_epoch: int | None, order: Order | None) -> MicroStep:
    every, s, GA, P = (
        plan.generate_every_micro_steps,
        plan.steps_per_generation,
        plan.gradient_accumulation_steps,
        plan.world_size,
    )
    epoch, local = divmod(n, per_epoch) if per_epoch else (0, n)
    chunk, generates = local // every, local % every == 0
    permutation = order(epoch) if order is not None and generates else None
    processes = tuple(
        ProcessBatch(
            rank,
            local * P + rank,
            _runs(process_rows(plan, chunk, rank), permutation) if generates else (),
            used=generates,
        )
        for rank in range(P)
    )
    return MicroStep(
        micro_step=n,
        epoch=epoch,
        generation=n // every,
        chunk=chunk,
        iteration=(local % every) // s + 1,
        buffer_slice=local % s,
        generates=generates,
        optimizer_step=_completed_step(plan, epoch, local, per_epoch),
        window=_window(local, GA, per_epoch),
        copy_of=None if generates else n - local % every,
        processes=processes,
    )


def _completed_step(plan: RunPlan, epoch: int, local: int, per_epoch: int | None) -> int | None:
    """transformers' loop: windows of GA micro-steps from each epoch's start; the epoch's last may be shorter."""
    GA = plan.gradient_accumulation_steps
    last_of_epoch = per_epoch is not None and local == per_epoch - 1
    if (local + 1) % GA and not last_of_epoch:
        return None
    steps_before = epoch * (plan.optimizer_steps_per_epoch or 0)
    return steps_before + local // GA + 1


def _window(local: int, GA: int, per_epoch: int | None) -> int:
    start = local - local % GA
    end = min(start + GA, per_epoch) if per_epoch else start + GA
    return end - start

"""Evaluation during training (`eval_strategy`), as TRL 1.16 runs it.

The test split is walked in the order of TRL's eval sampler: one permutation from a generator seeded with `seed`
(the same at every evaluation), each prompt repeated `num_generations_eval` (or `num_generations`) times, cut into
batches of `per_device_eval_batch_size` rows that accelerate deals to the processes in turn (the last round is
completed with rows from the start). Each batch is generated and scored with the model in eval mode (no dropout),
then its loss is computed without gradient accumulation. Metrics get an `eval_` prefix; `eval_loss` is the mean of
the batch losses over all processes.
"""

from __future__ import annotations

import torch

from grpo_runtime.data.datasets import dataset_rows
from grpo_runtime.data.rewards import RunState
from grpo_runtime.outputs.checkpoint import Progress
from grpo_runtime.outputs.metrics import MetricWindow, loss_metrics
from grpo_runtime.training.batch import Grouping, generate_batch
from grpo_runtime.training.parts import Parts
from grpo_runtime.training.step import data_loader_seed_draw, micro_step_loss


def eval_batches(
    num_rows: int,
    group: int,
    batch_size: int,
    processes: int,
    rank: int,
    seed: int,
    drop_last: bool,
    even_batches: bool = True,
) -> list[list[int]]:
    """Dataset indices of each eval batch this process scores, in order."""
    from accelerate.data_loader import BatchSamplerShard
    from torch.utils.data import BatchSampler

    permutation = torch.randperm(num_rows, generator=torch.Generator().manual_seed(seed)).tolist()
    stream = [index for index in permutation for _ in range(group)]
    batches = BatchSampler(stream, batch_size, drop_last)
    return list(
        BatchSamplerShard(
            batches, num_processes=processes, process_index=rank, split_batches=False, even_batches=even_batches
        )
    )


def evaluate(config, plan, parts: Parts, progress: Progress, epoch: float) -> dict[str, float | None]:
    """One evaluation pass over the test split; returns the `eval_*` metrics (identical on every process)."""
    grouping = Grouping.evaluation(config)
    batches = eval_batches(
        len(parts.eval_dataset),
        grouping.num_generations,
        config.per_device_eval_batch_size,
        parts.accelerator.num_processes,
        parts.rank,
        config.seed,
        config.dataloader_drop_last,
        parts.accelerator.even_batches,
    )
    window, losses = MetricWindow(), []
    data_loader_seed_draw()  # TRL's eval DataLoader draws its seed from the global RNG on every pass, too
    parts.model.eval()
    try:
        for indices in batches:
            state = RunState(progress.global_step, parts.total_steps, epoch, progress.num_input_tokens_seen)
            rows = dataset_rows(parts.eval_dataset, indices)
            generated = generate_batch(parts, config, plan, rows, state, grouping)
            window.add(generated.metrics)
            with torch.no_grad():
                out = micro_step_loss(config, parts, generated.batch, progress, grad_accum=1, training=False)
            losses.append(out.loss.detach().reshape(1))
            window.add(loss_metrics(out, parts.accelerator.reduce, parts.gather))
    finally:
        parts.model.train()
    window.set("num_tokens", progress.num_input_tokens_seen)
    metrics = window.summary()
    metrics["loss"] = parts.gather(torch.cat(losses).to(parts.device)).mean().item() if losses else None
    return {f"eval_{name}": value for name, value in metrics.items()}

"""Evaluation during training."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float, Int, YamlNoGuard


class EvalParams(AreaParams):
    area = "eval"
    title = "Evaluation"
    summary = (
        "Periodic evaluation on dataset_test_split. The global eval batch must be a multiple of "
        "num_generations_eval (or num_generations)."
    )
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "eval_strategy": {
            "no": "Never evaluate.",
            "steps": "Evaluate every eval_steps optimizer steps (logging_steps when eval_steps is null).",
            "epoch": "Evaluate at the end of every epoch.",
        },
        "include_for_metrics": {
            "inputs": "Pass the model inputs to compute_metrics.",
            "loss": "Pass the per-batch loss to compute_metrics.",
        },
    }

    eval_strategy: Annotated[Literal["no", "steps", "epoch"], YamlNoGuard] = Field(
        "no",
        description="When to evaluate: 'no', every eval_steps ('steps') or every epoch. Needs an eval "
        "split. Quote 'no' in YAML. (Formerly evaluation_strategy.)",
    )
    eval_steps: Float | None = Field(
        None,
        examples=[100],
        gt=0,
        description="Optimizer steps between evaluations; null uses logging_steps. Below 1 a fraction "
        "of the total steps.",
    )
    eval_delay: Float = Field(0, ge=0, description="Steps (or epochs) to wait before the first evaluation.")
    per_device_eval_batch_size: Int = Field(
        8,
        ge=1,
        description="Completions per process per evaluation batch. x world size must be a multiple of "
        "num_generations_eval (or num_generations).",
    )
    num_generations_eval: Int | None = Field(
        None,
        examples=[4],
        ge=0,
        description="Completions per prompt during evaluation; null or 0 uses num_generations.",
    )
    prediction_loss_only: bool = Field(False, description="Only compute the loss during evaluation.")
    eval_on_start: bool = Field(False, description="Evaluate once before training (a sanity check).")
    eval_do_concat_batches: bool = Field(True, description="Concatenate evaluation batches before computing metrics.")
    eval_use_gather_object: bool = Field(False, description="Gather nested evaluation outputs from all processes.")
    eval_accumulation_steps: Int | None = Field(
        None, ge=1, description="Evaluation steps to accumulate before moving outputs to the CPU."
    )
    include_for_metrics: list[Literal["inputs", "loss"]] = Field(
        default_factory=list, description="Extra values passed to compute_metrics: 'inputs', 'loss'."
    )
    batch_eval_metrics: bool = Field(False, description="Compute metrics batch by batch.")
    do_eval: bool = Field(False, description="Run evaluation (set automatically when eval_strategy is not 'no').")

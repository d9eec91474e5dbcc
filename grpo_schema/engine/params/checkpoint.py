"""Output directory, checkpoints and resuming."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import CheckpointOrFlag, Float, Int, YamlNoGuard


class CheckpointParams(AreaParams):
    area = "checkpoint"
    title = "Output and checkpoints"
    summary = "Where outputs go, how often checkpoints are written, and resuming."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "save_strategy": {
            "no": "Never write checkpoints (the final model is still saved).",
            "steps": "A checkpoint every save_steps optimizer steps.",
            "epoch": "A checkpoint at the end of every epoch.",
            "best": "A checkpoint whenever metric_for_best_model improves.",
        }
    }

    output_dir: str | None = Field(
        None,
        examples=["runs/qwen-0.5b-grpo"],
        description="Directory for checkpoints, metrics and the final model. null means 'trainer_output'.",
    )
    save_strategy: Annotated[Literal["no", "steps", "epoch", "best"], YamlNoGuard] = Field(
        "steps",
        description="When to save a checkpoint: every save_steps, every epoch, on a new best metric, or "
        "never. Quote 'no' in YAML.",
    )
    save_steps: Float = Field(
        500, gt=0, description="Optimizer steps between checkpoints. Below 1 a fraction of the total steps."
    )
    save_total_limit: Int | None = Field(
        None, examples=[2], ge=1, description="Keep at most this many checkpoints, deleting the oldest; null keeps all."
    )
    save_only_model: bool = Field(
        False, description="Save only the model, not optimizer/scheduler/RNG state (such checkpoints cannot resume)."
    )
    save_on_each_node: bool = Field(False, description="Save on every node (for nodes without shared storage).")
    enable_jit_checkpoint: bool = Field(False, description="Save a checkpoint when the job receives SIGTERM.")
    load_best_model_at_end: bool = Field(
        False, description="Reload the best checkpoint at the end; needs matching save and eval strategies."
    )
    metric_for_best_model: str | None = Field(
        None, examples=["eval_reward"], description="Metric that decides the best checkpoint."
    )
    greater_is_better: bool | None = Field(
        None, description="Whether a larger metric_for_best_model is better; null: false for names ending in 'loss'."
    )
    ignore_data_skip: bool = Field(False, description="On resume, do not fast-forward the data to where it stopped.")
    restore_callback_states_from_checkpoint: bool = Field(False, description="Restore callback states on resume.")
    resume_from_checkpoint: Annotated[str | bool | None, CheckpointOrFlag] = Field(
        None,
        examples=[True, "runs/qwen-0.5b-grpo/checkpoint-500"],
        description="Checkpoint directory to resume from (model, optimizer, scheduler, RNG, data position); "
        "true resumes from the latest checkpoint in output_dir, false or null starts fresh.",
    )


class HubParams(AreaParams):
    area = "hub"
    title = "Hugging Face Hub"
    summary = "Pushing checkpoints and the final model to the Hub."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "hub_strategy": {
            "end": "Push the final model (and the model card) at the end.",
            "every_save": "Push at every save, in the background.",
            "checkpoint": "Like every_save, plus the latest checkpoint in a last-checkpoint folder, to resume from.",
            "all_checkpoints": "Like every_save, with every checkpoint folder.",
        }
    }

    push_to_hub: bool = Field(False, description="Push the model to the Hub.")
    hub_model_id: str | None = Field(
        None, examples=["my-org/Qwen2.5-0.5B-GRPO"], description="Repository to push to; null uses the output_dir name."
    )
    hub_strategy: Literal["end", "every_save", "checkpoint", "all_checkpoints"] = Field(
        "every_save", description="What is pushed and when."
    )
    hub_token: str | None = Field(
        None, description="Hub token. Better left out of config files: use `hf auth login` or HF_TOKEN instead."
    )
    hub_private_repo: bool | None = Field(None, description="Create the repository as private.")
    hub_always_push: bool = Field(False, description="Push even if the previous push has not finished.")
    hub_revision: str | None = Field(None, description="Branch to push to.")

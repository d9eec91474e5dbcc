"""open-r1's script arguments as a Pydantic model (the open-r1 profile's typed keys).

Facts from huggingface/open-r1 src/open_r1/configs.py (its GRPOConfig subclass and GRPOScriptArguments); older
recipes also carry `dataset_configs`, a field of open-r1's first script arguments.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from grpo_schema.engine.types import Float, Int, StrList


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, coerce_numbers_to_str=True)


class MixtureDataset(_Strict):
    id: str = Field(description="Hub id of the dataset.")
    config: str | None = Field(None, description="Dataset configuration name.")
    split: str = Field("train", description="Split to load.")
    columns: StrList | None = Field(None, description="Columns to keep (must match across entries).")
    weight: Float | None = Field(None, ge=0, description="Fraction of this dataset to sample (default 1.0).")


class DatasetMixture(_Strict):
    datasets: list[MixtureDataset] = Field(description="The datasets to mix.")
    seed: Int = Field(0, description="Seed of the mixture's shuffling.")
    test_split_size: Float | None = Field(None, gt=0, description="Fraction held out as the test split.")


class OpenR1ScriptArgs(_Strict):
    """Keys read by open-r1's `grpo.py` in addition to TRL's."""

    benchmarks: StrList = Field(default_factory=list, description="Benchmarks to run after training.")
    callbacks: StrList = Field(default_factory=list, description="open-r1 callbacks to run during training.")
    chat_template: str | None = Field(None, description="Chat template (Jinja) to set on the tokenizer.")
    system_prompt: str | None = Field(None, description="System prompt prepended to every conversation.")
    hub_model_revision: str | None = Field("main", description="Hub branch to push the model to.")
    overwrite_hub_revision: bool = Field(False, description="Overwrite the Hub revision.")
    push_to_hub_revision: bool = Field(False, description="Push to a Hub revision (branch).")
    wandb_log_unique_prompts: bool = Field(True, description="Log unique prompts to W&B (open-r1's own field).")
    wandb_entity: str | None = Field(None, description="W&B entity.")
    wandb_project: str | None = Field(None, description="W&B project.")
    wandb_run_group: str | None = Field(None, description="W&B run group.")
    dataset_mixture: DatasetMixture | None = Field(None, description="A weighted mixture of datasets.")
    dataset_configs: StrList | None = Field(None, description="Older recipes: dataset configuration names.")
    dataset_prompt_column: str = Field("prompt", description="Column used as the prompt.")
    cosine_min_value_wrong: Float = Field(0.0, description="cosine reward: minimum for wrong answers.")
    cosine_max_value_wrong: Float = Field(-0.5, description="cosine reward: maximum for wrong answers.")
    cosine_min_value_correct: Float = Field(0.5, description="cosine reward: minimum for correct answers.")
    cosine_max_value_correct: Float = Field(1.0, description="cosine reward: maximum for correct answers.")
    cosine_max_len: Int = Field(1000, ge=1, description="cosine reward: length at which scaling ends.")
    repetition_n_grams: Int = Field(3, ge=1, description="repetition_penalty reward: n-gram size.")
    repetition_max_penalty: Float = Field(-1.0, le=0, description="repetition_penalty reward: maximum penalty.")
    code_language: Literal["python", "javascript", "r", "java", "bash", "cpp"] = Field(
        "python", description="Language of the code rewards."
    )
    code_eval_test_batch_size: Int = Field(
        1, description="Test cases evaluated in parallel per completion; below 1 runs all of them at once."
    )
    code_eval_scoring_mode: Literal["pass_fail", "partial", "weighted_sum"] = Field(
        "weighted_sum", description="How passed test cases become a reward."
    )
    parallel_code_exec_per_proc: Int = Field(2, ge=1, description="Parallel code executions per process.")
    e2b_router_url: str | None = Field(None, description="URL of the E2B router.")
    morph_router_url: str | None = Field(None, description="URL of the MorphCloud router.")
    code_provider: Literal["e2b", "local", "morph"] | None = Field("e2b", description="Code execution provider.")
    ioi_provider: Literal["piston", "morph"] | None = Field("piston", description="IOI execution provider.")
    max_completion_len: Int = Field(16384, ge=1, description="soft_overlong_punishment: length limit (chars).")
    soft_punish_cache: Int = Field(4096, ge=0, description="soft_overlong_punishment: soft zone length (chars).")

"""Prompt datasets: one Hub dataset, or a mixture, and how it is split and shuffled."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import Float, Int, StrList


class DatasetEntry(AreaParams):
    """One entry of `datasets:` (TRL's DatasetConfig): the arguments of `datasets.load_dataset`."""

    area = "data"
    title = "Dataset"

    path: str = Field(description="Hub id, local directory or loader name ('json', 'csv', ...). Required.")
    name: str | None = Field(None, description="Dataset configuration (subset) name.")
    data_dir: str | None = Field(None, description="Directory of data files inside the dataset.")
    data_files: str | list[str] | dict[str, str] | None = Field(
        None, description="Data file(s): one path, a list, or a mapping of split name to path."
    )
    split: str = Field("train", description="Split to load.")
    columns: StrList | None = Field(None, description="Columns to keep; null keeps all.")
    fraction: Float | None = Field(
        None,
        gt=0,
        le=1,
        description="Fraction of the split to use. Set it for every entry or for none; not with streaming.",
    )


class DataParams(AreaParams):
    area = "data"
    title = "Data"
    summary = (
        "Prompts come from dataset_name or from a `datasets:` mixture (which wins when both are set). "
        "Rows need a 'prompt' column; other columns are passed to reward functions."
    )
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "train_sampling_strategy": {
            "random": "Shuffle (transformers' default). GRPO ignores it: its own sampler keeps groups together.",
            "sequential": "Dataset order. Ignored by GRPO.",
            "group_by_length": "Batch rows of similar length together. Ignored by GRPO.",
            "batch_rebalance": "Rebalance batches across processes. Ignored by GRPO.",
        }
    }

    dataset_name: str | None = Field(
        None,
        examples=["trl-lib/DeepMath-103K"],
        description="Hub id or local path of the prompt dataset. Required unless `datasets` is given.",
    )
    dataset_config: str | None = Field(
        None, examples=["main"], description="Configuration (subset) name of dataset_name."
    )
    dataset_train_split: str = Field("train", description="Split used for training.")
    dataset_test_split: str = Field("test", description="Split used for evaluation when eval_strategy is not 'no'.")
    dataset_streaming: bool = Field(
        False, description="Stream dataset_name instead of downloading it (needs max_steps > 0)."
    )
    datasets: list[DatasetEntry] = Field(
        default_factory=list,
        examples=[[{"path": "trl-lib/DeepMath-103K", "split": "train"}]],
        description="A mixture of datasets, concatenated. Each entry needs a path.",
    )
    streaming: bool = Field(False, description="Stream the `datasets` mixture (needs max_steps > 0).")
    test_split_size: Float | None = Field(
        None,
        examples=[0.05],
        gt=0,
        description="Hold out part of the mixture for evaluation: a fraction in (0, 1) or a row count.",
    )
    shuffle_dataset: bool = Field(True, description="Shuffle prompts each epoch (seeded by seed).")
    remove_unused_columns: bool | None = Field(
        False,
        description="Keep only prompt (and image) columns. Leave false so reward functions see the other columns.",
    )
    label_names: StrList | None = Field(None, description="Label column names (not used by GRPO).")
    train_sampling_strategy: Literal["random", "sequential", "group_by_length", "batch_rebalance"] = Field(
        "random",
        description="transformers' sampler choice; GRPO always uses its own grouped sampler, so this has no effect.",
    )
    length_column_name: str = Field("length", description="Precomputed-length column for group_by_length.")


class DataloaderParams(AreaParams):
    area = "dataloader"
    title = "Data loader"
    summary = "Worker processes and memory pinning of the PyTorch data loader."
    # Per-value docs, shown by editors for each allowed value (grpo_schema.commands.export).
    value_docs = {
        "dataloader_multiprocessing_context": {
            "fork": "Copy the main process (fast; unsafe once CUDA is initialised).",
            "spawn": "Start fresh interpreters (safe with CUDA, slower to start).",
            "forkserver": "Fork from a clean server process.",
        }
    }

    dataloader_drop_last: bool = Field(False, description="Drop the last incomplete batch.")
    dataloader_num_workers: Int = Field(
        0, ge=0, description="Worker processes loading data; 0 loads in the main process."
    )
    dataloader_pin_memory: bool = Field(True, description="Pin host memory for faster copies to the GPU.")
    dataloader_persistent_workers: bool = Field(False, description="Keep workers alive between epochs.")
    dataloader_prefetch_factor: Int | None = Field(
        None, ge=1, description="Batches each worker loads ahead; needs dataloader_num_workers > 0."
    )
    dataloader_multiprocessing_context: Literal["fork", "spawn", "forkserver"] | None = Field(
        None, description="Start method of the worker processes."
    )
    dataloader_in_order: bool = Field(True, description="Return batches in order when using several workers.")

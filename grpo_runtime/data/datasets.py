"""The prompt dataset: where it comes from and what each row carries.

Sources, in the order `trl grpo` uses them:
* `datasets:` (a mixture): each entry is loaded with `datasets.load_dataset(path, name, data_dir, data_files,
  split)`, optionally restricted to `columns`; with `fraction` set on every entry the fractions are target shares
  of the mixture, which is capped so that no dataset is oversampled. `test_split_size` keeps the train part of a
  seeded split (TRL's split is unseeded; ours uses `seed` so runs repeat);
* `dataset_name`: a local JSONL / JSON / CSV / Parquet file, a folder written by `Dataset.save_to_disk`, or anything
  `datasets.load_dataset(dataset_name, dataset_config)` accepts; `dataset_train_split` picks the split.
Streaming datasets are not supported (the prompt order needs the dataset length).

Rows must have a `prompt` column: a string, or a list of chat messages. Every other column is passed to the reward
functions (unless `remove_unused_columns` is set, which keeps only `prompt`). Image columns (`image`, `images`: a
vision-language model's prompts) are refused, never dropped (model/modality.py).
"""

from __future__ import annotations

from pathlib import Path

from grpo_runtime.common import CannotRun
from grpo_runtime.model.modality import refuse_images

FILE_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def load_local_or_hub(name: str, config_name: str | None, split: str):
    """One split of `dataset_name`."""
    import datasets

    path = Path(name)
    if path.is_file() and path.suffix in FILE_BUILDERS:
        return datasets.load_dataset(FILE_BUILDERS[path.suffix], data_files=str(path), split="train")
    if path.is_dir() and (path / "dataset_info.json").exists():  # Dataset.save_to_disk
        return datasets.load_from_disk(str(path))
    if path.is_dir() and (path / "dataset_dict.json").exists():  # DatasetDict.save_to_disk
        splits = datasets.load_from_disk(str(path))
        if split not in splits:
            raise CannotRun(no_split(name, split, f"it has {', '.join(splits)}"))
        return splits[split]
    try:
        return datasets.load_dataset(name, name=config_name, split=split)
    except ValueError as error:
        if "Unknown split" not in str(error):
            raise
        raise CannotRun(no_split(name, split, str(error))) from None


def no_split(name: str, split: str, detail: str) -> str:
    return (
        f"dataset {name} has no split {split!r} ({detail}); name one it has with dataset_train_split / "
        "dataset_test_split (the test split is read when eval_strategy is not 'no')"
    )


def mixture_shares(sizes: list[int], fractions: list[float | None]) -> list[int]:
    """Rows kept from each dataset: the first `round(share * total)`, `total` as large as no dataset allows less."""
    if all(f is None for f in fractions):
        return sizes
    if any(f is None for f in fractions):
        raise CannotRun("`fraction` must be set on every dataset of the mixture or on none of them")
    weights = [f / sum(fractions) for f in fractions]
    total = min(size / w for size, w in zip(sizes, weights) if w > 0)
    return [round(w * total) for w in weights]


def load_mixture(entries, test_split_size: float | None, seed: int) -> dict:
    """{"train": ..., and "test" when test_split_size is set}."""
    import datasets

    parts = []
    for entry in entries:
        part = datasets.load_dataset(
            path=entry.path, name=entry.name, data_dir=entry.data_dir, data_files=entry.data_files, split=entry.split
        )
        parts.append(part.select_columns(list(entry.columns)) if entry.columns is not None else part)
    keep = mixture_shares([len(p) for p in parts], [e.fraction for e in entries])
    combined = datasets.concatenate_datasets([p.select(range(n)) for p, n in zip(parts, keep)])
    if test_split_size is None:
        return {"train": combined}
    return dict(combined.train_test_split(test_size=test_split_size, seed=seed))


def load_split(config, split: str):
    """`split` ("train" or "test") of the configured source; a source that cannot be found or reached is named in
    a CannotRun, not a traceback."""
    try:
        return read_split(config, split)
    except (FileNotFoundError, ConnectionError) as error:  # datasets' "not found" errors are FileNotFoundErrors
        source = config.dataset_name or ", ".join(str(entry.path) for entry in config.datasets or [])
        raise CannotRun(
            f"cannot load the dataset {source!r}: {error}".rstrip(".") + ". Check the name or path "
            "(a local data file in a `datasets:` entry is `path: json` with `data_files: FILE`)"
        ) from None


def read_split(config, split: str):
    """`split` of the configured source; for `dataset_name` the split names are `dataset_train_split` and
    `dataset_test_split`."""
    if config.dataset_streaming or config.streaming:
        raise CannotRun("streaming datasets are not supported by grpo_runtime; set dataset_streaming: false")
    if config.datasets:
        splits = load_mixture(config.datasets, config.test_split_size, config.seed)
        if split not in splits:
            raise CannotRun("evaluation needs a test split: set test_split_size for the `datasets` mixture")
        return splits[split]
    if config.dataset_name:
        single = Path(config.dataset_name).is_file() or (Path(config.dataset_name) / "dataset_info.json").exists()
        if split == "test" and single:
            raise CannotRun(
                f"evaluation needs a test split, but {config.dataset_name} holds one split only; use a "
                f"folder with train and test files or a `datasets:` mixture with test_split_size"
            )
        name = config.dataset_train_split if split == "train" else config.dataset_test_split
        return load_local_or_hub(config.dataset_name, config.dataset_config, name)
    raise CannotRun("no training data: set `dataset_name` or `datasets`")


def load_prompts(config, split: str = "train"):
    """The training (or test) split named by the validated config, as a map-style `datasets.Dataset`."""
    dataset = load_split(config, split)
    if "prompt" not in dataset.column_names:
        raise CannotRun(f"the {split} data has no 'prompt' column (columns: {dataset.column_names})")
    refuse_images(dataset, split)
    if config.remove_unused_columns:
        dataset = dataset.select_columns(["prompt"])
    return dataset


def dataset_rows(dataset, indices: list[int]) -> list[dict]:
    """The rows at `indices` (repeats allowed), in order. One `dataset[indices]` read returns them column by
    column; one read per row costs ~4x more (each read goes through the Arrow table and the formatter again)."""
    columns = dataset[list(indices)]
    names = list(columns)
    return [dict(zip(names, values)) for values in zip(*(columns[name] for name in names))]


def reward_columns(rows: list[dict]) -> dict[str, list]:
    """Extra columns of the rows, one list per column, as reward functions receive them."""
    keys = [k for k in rows[0] if k not in ("prompt", "completion", "completion_ids")]
    return {k: [row[k] for row in rows] for k in keys}

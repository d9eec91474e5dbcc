"""`grpo smoke`'s dataset: the real one when it is local or cached, else synthetic rows of the shape the real rows
would have (the prompt as the config's pipeline reads it, every column the reward functions take, a mixture's
entries each with their own columns), seeded from the file."""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass
from pathlib import Path

from grpo_runtime.smoke.plan import (
    EXERCISED,
    SUBSTITUTED,
    SmokePlan,
    SmokeRefused,
    another_machines,
    looks_local,
    refuse_strict,
)

SYNTHETIC_ROWS = 64
SYNTHETIC_TEST_ROWS = 4  # evaluation reads the whole test split, every step: a few prompts
# The keyword arguments every reward function receives that are not dataset columns.
REWARD_CALL_ARGS = {"prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric", "self"}


def strict_paths_check(config, plan: SmokePlan, script=None) -> None:
    """--strict-paths: every path of another machine is refused before anything is built."""
    if not plan.strict_paths:
        return
    for source in dataset_sources(config, script):
        if another_machines(source):
            refuse_strict(plan, "dataset", "dataset", source, "datasets" if config.datasets else "dataset_name")
    for key, what, component in (
        ("model_name_or_path", "model", "model"),
        ("reward_model_name_or_path", "reward model", "reward model"),
        ("deepspeed", "DeepSpeed config", "sharding"),
    ):
        value = getattr(config, key, None)
        if another_machines(value):
            refuse_strict(plan, component, what, value, key)


def dataset_cached(name: str) -> bool:
    from grpo_schema.engine.hardware.models import hub_cache_dirs

    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    datasets_cache = Path(os.environ.get("HF_DATASETS_CACHE") or home / "datasets")
    hub = [cache / ("datasets--" + name.replace("/", "--")) for cache in hub_cache_dirs()]
    return any(path.is_dir() for path in hub) or (datasets_cache / name.replace("/", "___")).is_dir()


LOADERS = {"json", "csv", "parquet", "text", "arrow", "pandas", "imagefolder", "audiofolder", "webdataset"}


def entry_sources(entry) -> list[str]:
    """What one `datasets:` entry reads: its data files for a loader name (`path: json`), else its path."""
    if str(entry.path) in LOADERS and entry.data_files:
        files = entry.data_files
        if isinstance(files, dict):
            files = [f for value in files.values() for f in ([value] if isinstance(value, str) else value)]
        return [str(f) for f in ([files] if isinstance(files, str) else files)]
    return [str(entry.path)]


def dataset_sources(config, script=None) -> list[str]:
    if config.datasets:
        return [source for entry in config.datasets for source in entry_sources(entry)]
    mixture = open_r1_mixture(script)
    if mixture is not None:
        return [str(entry.id) for entry in mixture.datasets]
    return [str(config.dataset_name)] if config.dataset_name else []


def open_r1_mixture(script):
    if script is None or script[0] != "open-r1":
        return None
    return getattr(script[1], "dataset_mixture", None)


def available(source: str) -> bool:
    """On this machine: a path that exists, or a Hub dataset in the cache."""
    return Path(source).expanduser().exists() or (not looks_local(source) and dataset_cached(source))


def reward_columns(reward_funcs: list) -> dict[str, str]:
    """The dataset columns the reward functions take (their named parameters), each with the reward asking."""
    columns = {}
    for func in reward_funcs:
        target = (
            func if inspect.isfunction(func) or inspect.ismethod(func) else (func.__call__ if callable(func) else func)
        )
        try:
            parameters = inspect.signature(target).parameters.values()
        except (TypeError, ValueError):
            continue
        for parameter in parameters:
            if (
                parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)
                or parameter.name in REWARD_CALL_ARGS
            ):
                continue
            if parameter.default is parameter.empty:
                columns.setdefault(parameter.name, getattr(func, "__name__", type(func).__name__))
    return columns


QUESTIONS = [
    ("What is 1 + 1?", "2"),
    ("What is 2 + 3?", "5"),
    ("What is 3 * 3?", "9"),
    ("What is 10 - 4?", "6"),
    ("What is 7 + 8?", "15"),
    ("What is 12 / 4?", "3"),
    ("What is 6 * 7?", "42"),
    ("What is 9 - 9?", "0"),
]


@dataclass
class RowShape:
    """The shape the real dataset's rows would have, as the config's pipeline reads them.

    `prompt_column` holds a string when a training script builds the conversation from it (open-r1: the system
    prompt and a user message with the column's text), else TRL's conversational prompt (a list of messages).
    `columns` are the other columns: those the reward functions take and those a mixture keeps."""

    prompt_column: str = "prompt"
    conversational: bool = True
    columns: tuple = ()

    def row(self, index: int, question: str, answer: str) -> dict:
        text = f"{question} Put the final answer in \\boxed{{}}."
        out = {self.prompt_column: [{"role": "user", "content": text}] if self.conversational else text}
        for column in self.columns:
            out[column] = f"${answer}$" if column == "solution" else answer
        return out


def synthetic_rows(shape: RowShape, count: int, seed: int) -> list[dict]:
    """`count` rows of `shape`, the questions drawn in an order seeded from the file (content_seed)."""
    import random

    order = random.Random(seed)
    return [shape.row(i, *QUESTIONS[order.randrange(len(QUESTIONS))]) for i in range(count)]


def write_rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def substitute_dataset(config, raw: dict, reward_funcs: list, plan: SmokePlan, workdir: Path, script=None) -> None:
    """Synthetic rows, of the shape the real data would have, for a dataset that is not on this machine: a Hub
    dataset that is not cached, or a path of another machine (refused under --strict-paths). A mixture stays a
    mixture (one synthetic file per entry, with the columns it keeps), so its own loading runs as written."""
    sources = dataset_sources(config, script)
    if not sources:
        return  # the runtime names the missing dataset itself
    key = "datasets" if config.datasets else ("dataset_mixture" if open_r1_mixture(script) else "dataset_name")
    elsewhere = [s for s in sources if looks_local(s) and not Path(s).expanduser().exists()]
    if elsewhere and plan.strict_paths:
        raise SmokeRefused(
            "dataset",
            f"the dataset path {elsewhere[0]} does not exist on this machine "
            "(--strict-paths: a path of another machine is refused, not substituted)",
            key,
        )
    remote = [s for s in sources if not available(s)]
    if not remote:
        plan.add("dataset", EXERCISED, f"{', '.join(sources)} as written (local or cached; read offline)")
        return
    open_r1 = script is not None and script[0] == "open-r1"
    prompt_column = (
        str(getattr(script[1], "dataset_prompt_column", None) or "prompt")
        if open_r1
        else str(raw.get("dataset_prompt_column") or "prompt")
    )
    needed = reward_columns(reward_funcs)
    mixture = open_r1_mixture(script)
    if mixture is not None:  # open-r1's mixture is cut to each entry's columns before the prompt is built
        for entry in mixture.datasets:
            for column in entry.columns or []:
                needed.setdefault(str(column), "the mixture's columns")
    needed.pop(prompt_column, None)
    why = []
    if elsewhere:
        why.append(f"path of another machine: {', '.join(elsewhere)} not on this machine")
    hub = [s for s in remote if s not in elsewhere]
    if hub:
        why.append(
            ("" if not elsewhere else f"{', '.join(hub)} ") + "not on disk or in the cache; nothing is downloaded"
        )
    data = workdir / "data"
    if config.datasets:
        substitute_mixture(config, needed, plan, data, "; ".join(why))
        return
    shape = RowShape(prompt_column, conversational=not open_r1, columns=tuple(sorted(needed)))
    from grpo_runtime.smoke.problems import code_rows, rows_note  # rows a code reward can run

    rows = code_rows(reward_funcs, shape, SYNTHETIC_ROWS, plan.seed) or synthetic_rows(shape, SYNTHETIC_ROWS, plan.seed)
    write_rows(data / "train.jsonl", rows)
    write_rows(data / "test.jsonl", rows[:SYNTHETIC_TEST_ROWS])
    form = (
        "text (open-r1 builds the conversation"
        + (", with the system prompt" if getattr(script[1], "system_prompt", None) is not None else "")
        + ")"
        if open_r1
        else "a conversation"
    )
    shown = ", ".join([f"{prompt_column} ({form})", *(f"{c} (read by {who})" for c, who in sorted(needed.items()))])
    plan.add(
        "dataset",
        SUBSTITUTED,
        f"{SYNTHETIC_ROWS} synthetic rows{rows_note(reward_funcs)} ("
        f"{SYNTHETIC_TEST_ROWS} in the test split) "
        f"with the columns {shown}, instead of {', '.join(remote)} ({'; '.join(why)})",
    )
    plan.overrides.update(
        dataset_name=str(data), dataset_config=None, dataset_train_split="train", dataset_test_split="test"
    )
    if mixture is not None:
        plan.overrides["dataset_mixture"] = None


def substitute_mixture(config, needed: dict, plan: SmokePlan, data: Path, why: str) -> None:
    """One synthetic JSONL per `datasets:` entry: the prompt, the columns the entry keeps (all of them when it
    names none: the prompt and what the rewards read); split, columns, fraction and test_split_size as written."""
    entries, shown = [], []
    for number, entry in enumerate(config.datasets):
        kept = [str(c) for c in entry.columns] if entry.columns is not None else ["prompt", *sorted(needed)]
        shape = RowShape("prompt", conversational=True, columns=tuple(c for c in kept if c != "prompt"))
        rows = synthetic_rows(shape, SYNTHETIC_ROWS, plan.seed + number)
        if "prompt" not in kept and entry.columns is not None:
            for row in rows:  # the entry keeps no prompt: its rows have none (the runtime says so)
                row.pop("prompt", None)
        path = data / f"mixture-{number}.jsonl"
        write_rows(path, rows)
        new = {"path": "json", "data_files": str(path), "split": "train"}
        if entry.columns is not None:
            new["columns"] = list(entry.columns)
        if entry.fraction is not None:
            new["fraction"] = entry.fraction
        entries.append(new)
        shown.append(f"{entry.path} ({', '.join(kept)})")
    plan.add(
        "dataset",
        SUBSTITUTED,
        f"a mixture of {len(entries)} synthetic datasets of {SYNTHETIC_ROWS} rows, "
        f"each with the columns its entry keeps: {'; '.join(shown)} ({why}); the mixture's columns, "
        "fractions and test_split_size as written",
    )
    plan.overrides["datasets"] = entries

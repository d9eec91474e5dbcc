"""Prompt lengths from the data: the distribution, in tokens, of the prompts a run will see, when the dataset is on
this machine, counted the way the trainer counts them.

Where the rows come from, in order: `dataset_name` as a local file (.jsonl, .json, .csv, .parquet, .arrow) or folder
(a `datasets` save_to_disk folder, a DatasetDict's split folder, or data files, the split's first), else the local
Hugging Face caches: the datasets cache (what `load_dataset` prepared: HF_DATASETS_CACHE, HF_HOME/datasets) and the
Hub cache's dataset snapshots (HF_HUB_CACHE, HF_HOME/hub). Nothing is downloaded. The split is
`dataset_train_split` (TRL's default "train"), the configuration `dataset_config`.

What a prompt is: TRL 1.16's GRPOTrainer reads the `prompt` column. A conversation (a list of {"role", "content"})
goes through the tokenizer's chat template with the generation prompt added (`chat_template_kwargs` passed on) and
is tokenized without special tokens (the template writes them); a plain string is tokenized with them. Under the
open-r1 profile its recipe's `dataset_prompt_column`, `system_prompt` and `chat_template` are used, as its grpo.py
does.

How it is counted: with the model's own tokenizer (tokenizer.json, from `model_name_or_path` as a folder or in the
Hub cache) through the `tokenizers` package, and the chat template rendered with jinja2 as transformers renders it
(trim_blocks, lstrip_blocks, a sandbox); each is imported only here and only when installed (neither imports
torch). Without them, or without the tokenizer on this machine, 4 characters a token (16 characters a message for
the template's markers), said as such.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from grpo_schema.engine.hardware.models import find_local_config

ROWS_READ = 5000  # rows read from the start of the split
CHARS_PER_TOKEN = 4  # the estimate without a tokenizer (English and maths text, BPE tokenizers)
TEMPLATE_CHARS = 16  # the estimate's allowance for a chat template's markers, per message
MAX_TEXT_FILE = 512 << 20  # a .json/.csv file larger than this is read only as far as ROWS_READ rows
SUFFIXES = (".jsonl", ".json", ".csv", ".parquet", ".arrow")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class PromptLengths:
    """The distribution of a dataset's prompt lengths in tokens."""

    p50: int
    p95: int
    longest: int
    rows: int
    source: str  # where the rows came from
    counted: str  # how the tokens were counted

    def describe(self) -> str:
        return (f"prompts of {self.p95} tokens: the 95th percentile of {self.rows} rows of {self.source} (p50 "
                f"{self.p50}, p95 {self.p95}, max {self.longest}; {self.counted}; pass --prompt-length to say)")

    def to_dict(self) -> dict[str, Any]:
        return {"p50": self.p50, "p95": self.p95, "max": self.longest, "rows": self.rows, "source": self.source,
                "counted": self.counted}


def percentile(sorted_values: list[int], share: float) -> int:
    """The nearest-rank percentile of sorted values."""
    rank = max(math.ceil(share * len(sorted_values)), 1)
    return sorted_values[rank - 1]


def data_prompt_lengths(name: Any, *, config_name: Any = None, split: Any = "train", column: str = "prompt",
                        system_prompt: str | None = None, model: Any = None, revision: Any = None,
                        chat_template: str | None = None, template_kwargs: dict | None = None
                        ) -> PromptLengths | None:
    """The prompt lengths of dataset `name` when its rows are on this machine, else None."""
    found = dataset_rows(name, config_name, str(split or "train"))
    if found is None:
        return None
    rows, source = found
    prompts = [prompt_of(row, column, system_prompt) for row in rows if isinstance(row, dict)]
    prompts = [p for p in prompts if p]
    if not prompts:
        return None
    counter, counted = token_counter(model, revision, chat_template, template_kwargs or {})
    lengths = sorted(counter(p) for p in prompts)
    return PromptLengths(percentile(lengths, 0.5), percentile(lengths, 0.95), lengths[-1], len(lengths), source,
                         counted)


def prompt_of(row: dict, column: str, system_prompt: str | None) -> str | list | None:
    value = row.get(column)
    if isinstance(value, str) and system_prompt is None:
        return value
    if isinstance(value, str):
        value = [{"role": "user", "content": value}]
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        return None
    if system_prompt is not None and not (value and value[0].get("role") == "system"):
        value = [{"role": "system", "content": system_prompt}] + list(value)
    return value


# --- where the rows are ---------------------------------------------------------------------------------------------

def dataset_rows(name: Any, config_name: Any, split: str) -> tuple[list, str] | None:
    if not isinstance(name, str) or not name.strip():
        return None
    files = local_files(Path(name).expanduser(), split)
    if not files and HUB_ID.match(name) and ".." not in name:
        files = cached_files(name, config_name if isinstance(config_name, str) else None, split)
    if not files:
        return None
    rows: list = []
    for path in files:
        try:
            rows += read_rows(path, ROWS_READ - len(rows))
        except (OSError, ValueError, UnicodeDecodeError, ImportError):
            continue
        if len(rows) >= ROWS_READ:
            break
    return (rows, str(files[0]) if len(files) == 1 else f"{files[0].parent} ({len(files)} files)") if rows else None


def local_files(path: Path, split: str) -> list[Path]:
    """The data files of a local dataset: a file, a save_to_disk folder (a DatasetDict's split folder), or a folder
    of data files (the split's own when their names say it)."""
    try:
        if path.is_file():
            return [path] if path.suffix in SUFFIXES else []
        if not path.is_dir():
            return []
        if (path / "dataset_dict.json").is_file() and (path / split).is_dir():
            path = path / split
        if (path / "state.json").is_file():  # save_to_disk: the state names its arrow files in order
            state = json.loads((path / "state.json").read_text(encoding="utf-8"))
            return [path / f["filename"] for f in state.get("_data_files", []) if (path / f["filename"]).is_file()]
        return split_files(sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file()
                                  and p.name not in ("dataset_info.json", "state.json", "dataset_dict.json")), split)
    except (OSError, ValueError, KeyError, TypeError):
        return []


def split_files(files: list[Path], split: str) -> list[Path]:
    """The files of `split` when some file's path names it, else all of them."""
    named = [p for p in files if re.search(rf"(^|[^a-z]){re.escape(split)}([^a-z]|$)", str(p).lower())]
    return named or files


def cache_roots() -> tuple[list[Path], list[Path]]:
    """(datasets caches, Hub caches) from the usual variables; read only, never created."""
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    datasets = Path(os.environ["HF_DATASETS_CACHE"]) if os.environ.get("HF_DATASETS_CACHE") else home / "datasets"
    hub = Path(os.environ["HF_HUB_CACHE"]) if os.environ.get("HF_HUB_CACHE") else home / "hub"
    return [datasets], [hub]


def cached_files(name: str, config_name: str | None, split: str) -> list[Path]:
    """The split's files of Hub dataset `name` in the datasets cache (arrow files load_dataset prepared), else the
    data files of its newest snapshot in the Hub cache."""
    org, repo = name.split("/")
    datasets, hubs = cache_roots()
    for root in datasets:
        base = root / f"{org}___{repo}"
        configs = [base / config_name] if config_name else sorted(base.glob("*"))
        for folder in configs:
            arrows = sorted(folder.glob(f"*/*/{repo}-{split}*.arrow")) if folder.is_dir() else []
            if arrows:
                newest = max(arrows, key=lambda p: p.stat().st_mtime).parent
                return sorted(p for p in arrows if p.parent == newest)
    for root in hubs:
        snapshots = sorted((root / f"datasets--{org}--{repo}" / "snapshots").glob("*"),
                           key=lambda p: p.stat().st_mtime)
        for snapshot in reversed(snapshots):
            files = local_files(snapshot / config_name if config_name and (snapshot / config_name).is_dir()
                                else snapshot, split)
            if files:
                return files
    return []


def read_rows(path: Path, limit: int) -> list:
    if limit <= 0:
        return []
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as handle:
            return [json.loads(line) for _, line in zip(range(limit), (l for l in handle if l.strip()))]
    if path.suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as handle:
            return [dict(r) for _, r in zip(range(limit), csv.DictReader(handle))]
    if path.suffix == ".json":
        if path.stat().st_size > MAX_TEXT_FILE:
            return []
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):  # {"data": [...]} or {"column": [values]}
            data = data.get("data", data)
        if isinstance(data, dict):
            columns = [k for k, v in data.items() if isinstance(v, list)]
            data = [dict(zip(columns, values)) for values in zip(*(data[c] for c in columns))]
        return list(data[:limit]) if isinstance(data, list) else []
    return arrow_rows(path, limit)


def arrow_rows(path: Path, limit: int) -> list:
    """Rows of a parquet or arrow file through pyarrow, when it is installed (ImportError otherwise)."""
    import pyarrow as pa

    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        batches: Iterable = pq.ParquetFile(path).iter_batches(batch_size=min(limit, 1024))
    else:
        try:
            batches = pa.ipc.open_stream(path)  # what `datasets` writes
        except pa.ArrowInvalid:
            batches = (b for reader in [pa.ipc.open_file(path)] for b in
                       (reader.get_batch(i) for i in range(reader.num_record_batches)))
    rows: list = []
    for batch in batches:
        rows += batch.to_pylist()[: limit - len(rows)]
        if len(rows) >= limit:
            break
    return rows


# --- how the tokens are counted -------------------------------------------------------------------------------------

def token_counter(model: Any, revision: Any, chat_template: str | None, kwargs: dict):
    """(count(prompt) -> tokens, how it counts)."""
    found = tokenizer_files(model, revision)
    estimate = (estimated_tokens, f"estimated at {CHARS_PER_TOKEN} characters a token")
    if found is None:
        return estimate[0], estimate[1] + " (the model's tokenizer is not on this machine)"
    folder, settings = found
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return estimate[0], estimate[1] + " (the tokenizers package is not installed)"
    try:
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception as exc:  # the tokenizers library raises its own exception types
        return estimate[0], estimate[1] + f" ({folder / 'tokenizer.json'} does not load: {exc})"
    template = chat_template or template_of(folder, settings)
    render = template_renderer(template, settings, kwargs)
    how = f"counted with the tokenizer in {folder}"

    def count(prompt) -> int:
        if isinstance(prompt, str):
            return len(tokenizer.encode(prompt, add_special_tokens=True).ids)
        text = render(prompt) if render else None
        if text is None:  # no template to render: the messages' tokens and the estimate's markers
            return sum(len(tokenizer.encode(str(m.get("content", "")), add_special_tokens=False).ids)
                       + TEMPLATE_CHARS // CHARS_PER_TOKEN for m in prompt)
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    if render is None:
        how += ", the chat template " + ("not rendered (jinja2 is not installed)" if template else "absent") + \
            f": {TEMPLATE_CHARS // CHARS_PER_TOKEN} tokens a message for its markers"
    else:
        how += " after its chat template"
    return count, how


def estimated_tokens(prompt) -> int:
    if isinstance(prompt, str):
        return -(-len(prompt) // CHARS_PER_TOKEN)
    chars = sum(len(str(m.get("content", ""))) + TEMPLATE_CHARS for m in prompt)
    return -(-chars // CHARS_PER_TOKEN)


def tokenizer_files(model: Any, revision: Any) -> tuple[Path, dict] | None:
    """(the folder holding tokenizer.json, its tokenizer_config.json) for a local model folder or a model in the Hub
    cache; None when there is no tokenizer.json."""
    if not isinstance(model, str) or not model:
        return None
    config = find_local_config(model, revision if isinstance(revision, str) else None)
    folder = config.parent if config is not None else Path(model).expanduser()
    try:
        if not (folder / "tokenizer.json").is_file():
            return None
        path = folder / "tokenizer_config.json"
        settings = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return None
    return folder, settings if isinstance(settings, dict) else {}


def template_of(folder: Path, settings: dict) -> str | None:
    """The chat template: chat_template.jinja beside the tokenizer (transformers 4.43 on), else tokenizer_config's
    (a string, or the one named "default" of a list)."""
    try:
        if (folder / "chat_template.jinja").is_file():
            return (folder / "chat_template.jinja").read_text(encoding="utf-8")
    except OSError:
        pass
    template = settings.get("chat_template")
    if isinstance(template, list):
        template = next((t.get("template") for t in template if isinstance(t, dict) and t.get("name") == "default"),
                        None)
    return template if isinstance(template, str) else None


def special_token(settings: dict, key: str) -> str:
    value = settings.get(key)
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else ""


def template_renderer(template: str | None, settings: dict, kwargs: dict):
    """messages -> the text the template writes with the generation prompt added, or None (no template, no jinja2,
    or a template that fails on these messages)."""
    if not template:
        return None
    try:
        from jinja2 import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        return None

    def raise_exception(message):
        raise TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = tojson
    env.globals.update(raise_exception=raise_exception, strftime_now=lambda fmt: datetime.now().strftime(fmt))
    try:
        compiled = env.from_string(template)
    except TemplateError:
        return None
    values = {"bos_token": special_token(settings, "bos_token"), "eos_token": special_token(settings, "eos_token"),
              "add_generation_prompt": True, **kwargs}

    def render(messages) -> str | None:
        try:
            return compiled.render(messages=messages, **values)
        except Exception:  # a template's own raise_exception, or one written for other message shapes
            return None

    return render

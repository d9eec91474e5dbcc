"""What the form's model and dataset pickers offer: GET /api/v1/local (models and datasets in the local Hub cache
and in folders under the service's working directory) and GET /api/v1/local/preview?path= (the first rows of a
local dataset).

Only names are listed, and only the working directory and the Hub cache are looked at (two levels deep, a bounded
number of entries). A folder is offered as a model when its config.json is a model's (not a run's GRPO config),
as a dataset when it has a dataset's markers or data files of rows; a data file of rows is offered by itself.
A preview reads data files (JSON Lines, JSON, CSV, Parquet) under the working directory only:
paths that lead elsewhere (absolute, `..`, symlinks out) are refused, so the service cannot be asked for any other
file on the machine.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
from pathlib import Path
from typing import Annotated, Any, Iterator

from fastapi import APIRouter, HTTPException, Query
from fastapi.concurrency import run_in_threadpool

router = APIRouter(prefix="/api/v1/local", tags=["local"])
DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
MAX_ENTRIES = 200
PREVIEW_ROWS = 5
MAX_CELL = 400


def hub_cache() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    return Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")) / "hub"


def _hub(kind: str) -> list[dict[str, str]]:
    root = hub_cache()
    if not root.is_dir():
        return []
    prefix = f"{kind}--"
    names = sorted(
        p.name[len(prefix) :].replace("--", "/")
        for p in itertools.islice(root.iterdir(), MAX_ENTRIES * 5)
        if p.name.startswith(prefix)
    )
    return [{"name": n, "where": "Hub cache"} for n in names[:MAX_ENTRIES]]


def _folders(root: Path) -> Iterator[Path]:
    for child in itertools.islice(sorted(root.iterdir()), MAX_ENTRIES):
        if child.is_dir() and not child.name.startswith("."):
            yield child
            for grandchild in itertools.islice(sorted(child.iterdir()), MAX_ENTRIES):
                if grandchild.is_dir() and not grandchild.name.startswith("."):
                    yield grandchild


# A run's folder (the service's runs, `grpo launch`): its config.json is the GRPO config it ran, not a model's.
RUN_MARKERS = ("process.json", "run.log", "exit.json", "run_info.json", "metrics.jsonl")
# Keys a GRPO config has and a model's config.json never does.
GRPO_KEYS = (
    "model_name_or_path",
    "num_generations",
    "per_device_train_batch_size",
    "reward_funcs",
    "output_dir",
    "learning_rate",
    "dataset_name",
    "num_processes",
)
DATASET_MARKERS = ("dataset_info.json", "dataset_dict.json", "state.json")
PEEK_BYTES = 65536


def _is_model(folder: Path) -> bool:
    """A folder transformers can load a model from: a config.json that is a model's. A run's folder has a
    config.json too, the GRPO config it ran (with its log and process files beside it): not a model."""
    config = folder / "config.json"
    if not config.is_file() or config.stat().st_size > 1_000_000:
        return False
    if any((folder / marker).exists() for marker in RUN_MARKERS):
        return False
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and not any(key in data for key in GRPO_KEYS)


def _records(path: Path) -> bool:
    """Whether a data file holds rows a dataset loader reads: JSON Lines of objects, a JSON list of objects (or
    {"data": [...]}), a CSV with a header and a row, a Parquet file. Settings, caches and logs are not datasets."""
    try:
        if path.suffix == ".parquet":
            with path.open("rb") as handle:
                return handle.read(4) == b"PAR1"
        with path.open(encoding="utf-8", errors="strict") as handle:
            head = handle.read(PEEK_BYTES)
    except (OSError, UnicodeDecodeError):
        return False
    if path.suffix == ".jsonl":
        first = next((line for line in head.splitlines() if line.strip()), "")
        try:
            return isinstance(json.loads(first), dict)
        except ValueError:
            return False
    if path.suffix == ".csv":
        rows = list(itertools.islice(csv.reader(head.splitlines()), 2))
        return len(rows) == 2 and len(rows[0]) >= 1 and all(cell.strip() for cell in rows[0])
    text = head.lstrip()
    if text.startswith("{"):
        return '"data"' in text[:2000] and "[" in text[:2000]
    return text.startswith("[") and text[1:].lstrip().startswith("{")


def _data_files(folder: Path) -> list[Path]:
    return [
        p
        for p in itertools.islice(sorted(folder.iterdir()), 50)
        if p.is_file()
        and p.suffix in DATA_SUFFIXES
        and p.name not in ("config.json", "tokenizer.json", "tokenizer_config.json")
    ]


def _is_dataset(folder: Path) -> bool:
    """A folder `datasets.load_dataset` or `load_from_disk` reads: its markers, or data files of rows (in it or in
    its data/ folder), and no model config."""
    if any((folder / marker).is_file() for marker in DATASET_MARKERS):
        return True
    if (folder / "config.json").exists():
        return False
    files = _data_files(folder) + (_data_files(folder / "data") if (folder / "data").is_dir() else [])
    return bool(files) and all(_records(p) for p in files[:5])


def local_entries(root: Path) -> dict[str, list[dict[str, str]]]:
    models, datasets = _hub("models"), _hub("datasets")
    try:
        found: list[str] = []
        for folder in _folders(root):
            name = f"./{folder.relative_to(root).as_posix()}"
            if any(name.startswith(f + "/") for f in found):
                continue  # inside a model or a dataset already offered (a dataset's data/ folder)
            if _is_model(folder):
                models.append({"name": name, "where": "local folder"})
                found.append(name)
            elif _is_dataset(folder):
                datasets.append({"name": name, "where": "local folder"})
                found.append(name)
        # Loose data files beside them (./prompts.jsonl), when they hold rows.
        for folder in [root, *(f for f in _folders(root) if f.parent == root)]:
            name = "." if folder == root else f"./{folder.relative_to(root).as_posix()}"
            if name in found or any(name.startswith(f + "/") for f in found):
                continue
            for path in _data_files(folder)[:20]:
                if _records(path):
                    datasets.append({"name": f"./{path.relative_to(root).as_posix()}", "where": "local file"})
    except OSError:
        pass  # a folder that cannot be read is simply not offered
    return {"models": models[:MAX_ENTRIES], "datasets": datasets[:MAX_ENTRIES]}


def resolve_local(root: Path, value: str) -> Path:
    try:
        return _resolve_local(root, value)
    except OSError as exc:  # a name too long, a loop of links, a folder that cannot be read
        raise HTTPException(404, f"{value[:80]!r} cannot be read: {exc.strerror or exc}") from None


def _resolve_local(root: Path, value: str) -> Path:
    path = Path(value)
    if "\x00" in value or path.is_absolute() or value.startswith("~") or ".." in path.parts:
        raise HTTPException(422, f"{value!r} is not a relative path under the service's working directory")
    resolved = (root / path).resolve()
    if not resolved.is_relative_to(root.resolve()) or not resolved.exists():
        raise HTTPException(
            404,
            f"{value!r} is not a local file or folder under the service's working directory "
            "(Hub datasets are not downloaded for a preview)",
        )
    if resolved.is_dir():
        files = sorted(
            p
            for p in resolved.rglob("*")
            if p.suffix in DATA_SUFFIXES and p.is_file() and p.resolve().is_relative_to(root.resolve())
        )
        if not files:
            raise HTTPException(404, f"{value!r} holds no {', '.join(DATA_SUFFIXES)} file")
        resolved = files[0]
    if resolved.suffix not in DATA_SUFFIXES:
        raise HTTPException(422, f"only data files are previewed ({', '.join(DATA_SUFFIXES)})")
    return resolved


def _rows(path: Path) -> list[Any]:
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as handle:
            return [json.loads(line) for line in itertools.islice((row for row in handle if row.strip()), PREVIEW_ROWS)]
    if path.suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as handle:
            return list(itertools.islice(csv.DictReader(handle), PREVIEW_ROWS))
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise HTTPException(422, "previewing Parquet needs pyarrow on the service's machine") from None
        return pq.ParquetFile(path).read_row_group(0).slice(0, PREVIEW_ROWS).to_pylist()
    if path.stat().st_size > 20_000_000:
        raise HTTPException(422, "that JSON file is too large to preview; JSON Lines files are read row by row")
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = data if isinstance(data, list) else data.get("data", [data]) if isinstance(data, dict) else []
    return rows[:PREVIEW_ROWS]


def _cell(value: Any) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_CELL else text[:MAX_CELL] + "…"


def preview(root: Path, value: str) -> dict[str, Any]:
    path = resolve_local(root, value)
    try:
        rows = [r if isinstance(r, dict) else {"value": r} for r in _rows(path)]
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise HTTPException(422, f"{path.name} could not be read: {exc}") from None
    columns = list(dict.fromkeys(k for r in rows for k in r))
    return {
        "path": path.relative_to(root.resolve()).as_posix(),
        "columns": columns,
        "rows": [{k: _cell(r.get(k)) for k in columns} for r in rows],
    }


@router.get("", summary="Models and datasets on this machine, for the form's pickers")
async def local() -> dict[str, list[dict[str, str]]]:
    return await run_in_threadpool(local_entries, Path.cwd())


@router.get(
    "/preview",
    summary="The first rows of a local dataset",
    responses={404: {"description": "no such local dataset"}, 422: {"description": "not previewable"}},
)
async def local_preview(path: Annotated[str, Query(max_length=1000)]) -> dict[str, Any]:
    return await run_in_threadpool(preview, Path.cwd(), path)

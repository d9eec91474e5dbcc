"""Where a dataset's rows are on this machine, and its first rows, read within bounds.

`dataset_name` as a local file (.jsonl, .json, .csv, .parquet, .arrow) or folder (a `datasets` save_to_disk folder,
a DatasetDict's split folder, or data files, the split's first), else the local Hugging Face caches: the datasets
cache (what `load_dataset` prepared: HF_DATASETS_CACHE, HF_HOME/datasets) and the Hub cache's dataset snapshots
(HF_HUB_CACHE, HF_HOME/hub). Nothing is downloaded.

The reads are bounded so that a large file costs what a small one does: ROWS_READ rows from the start of the split,
at most READ_BYTES of a text file (a JSON array is parsed element by element, never whole), only the prompt column
of a Parquet or Arrow file; a row the parser cannot take ends the read with the rows before it.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import Iterable, Iterator

ROWS_READ = 5000  # rows read from the start of the split
READ_BYTES = 64 << 20  # bytes of a JSON Lines, JSON or CSV file read at most
CHUNK = 1 << 20
SUFFIXES = (".jsonl", ".json", ".csv", ".parquet", ".arrow")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def dataset_files(name: str, config_name: str | None, split: str, where: Path) -> list[Path]:
    """The data files of the split: `where` (the path `name` names) when it is local, else the caches."""
    files = local_files(where, split)
    if not files and HUB_ID.match(name) and ".." not in name:
        files = cached_files(name, config_name, split)
    return files


def first_rows(files: list[Path], column: str) -> Iterator:
    """Up to ROWS_READ rows of the files in order, read as they are taken (a file that cannot be read, or a row
    the parser cannot take, ends that file's rows)."""
    left = ROWS_READ
    for path in files:
        for row in read_rows(path, column):
            yield row
            left -= 1
            if left <= 0:
                return


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
        return split_files(
            sorted(
                p
                for p in path.rglob("*")
                if p.suffix in SUFFIXES
                and p.is_file()
                and p.name not in ("dataset_info.json", "state.json", "dataset_dict.json")
            ),
            split,
        )
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
        snapshots = sorted((root / f"datasets--{org}--{repo}" / "snapshots").glob("*"), key=lambda p: p.stat().st_mtime)
        for snapshot in reversed(snapshots):
            files = local_files(
                snapshot / config_name if config_name and (snapshot / config_name).is_dir() else snapshot, split
            )
            if files:
                return files
    return []


# --- reading ---------------------------------------------------------------------------------------------------------


def read_rows(path: Path, column: str) -> Iterator:
    readers = {".jsonl": json_lines, ".csv": csv_rows, ".json": json_rows}
    rows = readers[path.suffix](path) if path.suffix in readers else arrow_rows(path, column)
    try:
        yield from rows
    except (OSError, ValueError, UnicodeDecodeError, ImportError, csv.Error):
        return


def limited_lines(handle) -> Iterator:
    """The lines of an open file up to READ_BYTES (characters in text mode); a line longer than what is left ends
    them."""
    left = READ_BYTES
    while left > 0:
        line = handle.readline(left)
        if not line or (len(line) == left and line[-1:] not in ("\n", b"\n")):
            return  # the end, or a line longer than what is left to read
        left -= len(line)
        yield line


def json_lines(path: Path) -> Iterator:
    with path.open("rb") as handle:
        for line in limited_lines(handle):
            if line.strip():
                yield json.loads(line)


def csv_rows(path: Path) -> Iterator:
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(limited_lines(handle)):
            yield dict(row)


def json_rows(path: Path) -> Iterator:
    """The records of a JSON file: an array is decoded one element at a time, so only the rows read are parsed;
    {"data": [...]} and {"column": [values]} are parsed whole when the file is within READ_BYTES."""
    with path.open(encoding="utf-8") as handle:
        head = handle.read(CHUNK)
        start = len(head) - len(head.lstrip())
        if head[start : start + 1] == "[":
            yield from _array_elements(handle, head, start + 1)
            return
    if path.stat().st_size > READ_BYTES:
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("data", data)
    if isinstance(data, dict):
        columns = [k for k, v in data.items() if isinstance(v, list)]
        data = [dict(zip(columns, values)) for values in zip(*(data[c] for c in columns))]
    if isinstance(data, list):
        yield from data


def _array_elements(handle, buffer: str, at: int) -> Iterator:
    decoder = json.JSONDecoder()
    read = len(buffer)
    while True:
        while at < len(buffer) and buffer[at] in " \t\r\n,":
            at += 1
        if at < len(buffer) and buffer[at] == "]":
            return
        try:
            value, at = decoder.raw_decode(buffer, at)
        except json.JSONDecodeError:  # the element goes on past the buffer: read more, within READ_BYTES
            more = handle.read(CHUNK) if read < READ_BYTES else ""
            if not more:
                return
            read += len(more)
            buffer, at = buffer[at:] + more, 0
            continue
        yield value


def arrow_rows(path: Path, column: str) -> Iterator:
    """Rows of a parquet or arrow file through pyarrow (ImportError without it): the prompt column only, when the
    file has it."""
    import pyarrow as pa

    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        source = pq.ParquetFile(path)
        columns = [column] if column in source.schema_arrow.names else None
        batches: Iterable = source.iter_batches(batch_size=256, columns=columns)
    else:
        try:
            batches = pa.ipc.open_stream(path)  # what `datasets` writes
        except pa.ArrowInvalid:
            batches = (
                b
                for reader in [pa.ipc.open_file(path)]
                for b in (reader.get_batch(i) for i in range(reader.num_record_batches))
            )
    for batch in batches:
        if column in batch.schema.names:
            batch = batch.select([column])
        for start in range(0, batch.num_rows, 256):
            yield from batch.slice(start, 256).to_pylist()

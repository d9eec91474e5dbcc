"""What a run leaves on disk: metrics.jsonl (copied into the database as it grows), run.log, checkpoints."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from grpo_web.runs.launcher import LOG_FILE
from grpo_web.runs.store import Run, Store

CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
# grpo_runtime.outputs.checkpoint.STATE_FILE, spelled out: the service never imports the runtime (torch); a test holds
# the two equal.
RUNTIME_STATE_FILE = "runtime_state.json"
MAX_INGEST_BYTES = 4 << 20  # per look: a huge file is taken in slices, never read whole


def ingest_metrics(store: Store, run: Run) -> int:
    """Copy the complete new lines of OUTPUT_DIR/metrics.jsonl into the store. Returns how many were added.

    The offset and the file's inode are stored with the records, so nothing is copied twice or skipped across
    restarts. A fresh run deletes the file it finds and starts a new one: a new inode (or a shorter file)
    means the copy so far was of the old file, and it is dropped."""
    path = Path(run.output_dir) / "metrics.jsonl"
    try:
        status = path.stat()
    except OSError:
        return 0
    offset = run.metrics_offset
    if (run.metrics_inode is not None and status.st_ino != run.metrics_inode) or status.st_size < offset:
        store.forget_metrics(run.id)
        offset = 0
    if status.st_size == offset:
        return 0
    with path.open("rb") as handle:
        handle.seek(offset)
        data = handle.read(MAX_INGEST_BYTES)
    complete = data[: data.rfind(b"\n") + 1]  # a line still being written waits for the next look
    if not complete:
        return 0
    records = [record for line in complete.splitlines() if (record := _record(line)) is not None]
    store.add_metrics(run.id, records, offset + len(complete), status.st_ino)
    return len(records)


def skip_existing_metrics(store: Store, run: Run) -> None:
    """Start copying at the current end of metrics.jsonl (a resumed run appends to the file it finds)."""
    try:
        status = (Path(run.output_dir) / "metrics.jsonl").stat()
    except OSError:
        return
    store.update(run.id, metrics_offset=status.st_size, metrics_inode=status.st_ino)


def _record(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def log_path(run: Run) -> Path:
    return Path(run.run_dir) / LOG_FILE


def log_size(run: Run) -> int:
    try:
        return os.stat(log_path(run)).st_size
    except OSError:
        return 0


def read_log(run: Run, offset: int, limit: int) -> bytes:
    try:
        with log_path(run).open("rb") as handle:
            handle.seek(offset)
            return handle.read(limit)
    except OSError:
        return b""


def checkpoints(output_dir: str | Path) -> list[Path]:
    """checkpoint-STEP folders, oldest first."""
    root = Path(output_dir)
    found = [(int(m.group(1)), p) for p in root.glob("checkpoint-*") if (m := CHECKPOINT.match(p.name))]
    return [p for _, p in sorted(found)]


def checkpoint_step(checkpoint: Path) -> int:
    return int(CHECKPOINT.match(checkpoint.name).group(1))


def complete(checkpoint: Path) -> bool:
    """Written to the end: grpo_runtime writes its state file last, once every process has saved, so a
    checkpoint cut short by a cancel has none."""
    return (checkpoint / RUNTIME_STATE_FILE).is_file()


def last_complete_checkpoint(output_dir: str | Path) -> Path | None:
    return next((c for c in reversed(checkpoints(output_dir)) if complete(c)), None)

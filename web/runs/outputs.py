"""What a run leaves on disk: metrics.jsonl (copied into the database as it grows), run.log, checkpoints."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from grpo_web.runs import completions
from grpo_web.runs.launcher import LOG_FILE
from grpo_web.runs.store import Run, Store

CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
# grpo_runtime.outputs.checkpoint.STATE_FILE, spelled out: the service never imports the runtime (torch); a test holds
# the two equal.
RUNTIME_STATE_FILE = "runtime_state.json"
MAX_INGEST_BYTES = 4 << 20  # per look: a huge file is taken in slices, never read whole
# What a run's page reads from its output_dir besides checkpoints: its metrics file (run health), what really ran,
# its completions. An overwrite keeps them, in the run's own folder, under KEPT.
RECORDS = ("metrics.jsonl", "run_info.json", *completions.FILES)
KEPT = "replaced-output"


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


def keep_records(output_dir: str | Path, runs: list[Run]) -> None:
    """Before an overwrite deletes output_dir: each replaced run keeps its records (RECORDS) in RUNS_DIR/<id>/KEPT,
    so its completions, metrics file and health stay its own and never become the new run's. A hard link costs
    nothing; a copy is made where the output_dir is on another file system."""
    for name in RECORDS:
        found = Path(output_dir) / name
        if not found.is_file():
            continue
        for run in runs:
            kept = Path(run.run_dir) / KEPT
            kept.mkdir(parents=True, exist_ok=True)
            (kept / name).unlink(missing_ok=True)
            try:
                os.link(found, kept / name)
            except OSError:
                shutil.copy2(found, kept / name)


def records_folder(run: Run) -> Path:
    """Where the run's records are read: its output_dir, or once another run overwrote it, what it kept."""
    return Path(run.run_dir) / KEPT if run.replaced_by else Path(run.output_dir)


def completions_size(output_dir: str | Path) -> int | None:
    """The size of the output_dir's completions file now (None: there is none yet)."""
    found = completions.source(output_dir)
    try:
        return found.stat().st_size if found else None
    except OSError:
        return None


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


# A failed run's cause, read from the end of its log: the last exception a traceback ends with, else the lines
# with diagnostic codes (`grpo launch` refusing the config), else the last line a process printed.
CAUSE_TAIL_BYTES = 64 << 10
CAUSE_MAX_CHARS = 2000
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)\b(?::.*)?$")
_WRAPPER = re.compile(r"CalledProcessError|returned non-zero exit status")  # accelerate's launcher, not the cause
CAUSE_MAX_LINES = 12
_CODED = re.compile(r"\bGRPO-[A-Z]\d{3}\b")
_NOISE = re.compile(r"^(?:\[grpo-config [^\]]*\]|\$ |Traceback |\s*File \"|\s*\^+\s*$|\s*~+\s*$|grpo: [^:]*\d+ steps?)")


def failure_cause(run: Run) -> str | None:
    """What the log says went wrong: the exception line (and the message lines after it), the diagnostics, or
    the last line; None when the log says nothing."""
    size = log_size(run)
    data = read_log(run, max(size - CAUSE_TAIL_BYTES, 0), CAUSE_TAIL_BYTES).decode("utf-8", "replace")
    lines = [line[line.rfind("\r") + 1 :].rstrip() for line in data.splitlines()]
    lines = [line for line in lines if line.strip() and not line.startswith("[grpo-config ")]
    found = [i for i, line in enumerate(lines) if _EXCEPTION.match(line.strip()) and not _WRAPPER.search(line)]
    if found:  # the last real exception, with the lines of its message (up to the next traceback or note)
        index, message = found[-1], []
        for line in lines[index : index + CAUSE_MAX_LINES]:
            if message and (line.startswith(("Traceback ", "python -m ", "grpo launch", "grpo: ", " "))):
                break
            message.append(line.strip())
        return _cut("\n".join(message))
    coded = [line.strip() for line in lines if _CODED.search(line)]
    if coded:
        return _cut("\n".join(dict.fromkeys(coded)))
    tail = [line.strip() for line in lines if not _NOISE.match(line)]
    return _cut(tail[-1]) if tail else None


def _cut(text: str) -> str:
    return text if len(text) <= CAUSE_MAX_CHARS else text[:CAUSE_MAX_CHARS] + "…"

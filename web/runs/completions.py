"""Reading a run's completions: OUTPUT_DIR/completions.jsonl (log_completions), else the runtime's small sample
(completions-sample.jsonl). grpo_runtime.outputs.completions writes them; this reader never imports the runtime.

Reading is bounded and forgiving:
- Each file has an index of its rows (byte offset and length of every complete line, its step, its group and the
  scores it is filtered and sorted by: completion_query), built once and
  extended as the file grows (only the new bytes are read), rebuilt when the file is replaced or rewritten (another
  inode, a shorter file, or the same size with another modification time). A page reads only its own lines.
- A line of up to LINE_CAP_BYTES is read when its page is asked for. A longer one (a completion of megabytes) is
  read once, while it is indexed, and its row is kept already cut; only `full=1` (one row, asked for by the view's
  "show all") reads it whole again. A line over MAX_LINE_BYTES is never read whole: it is skipped, and counted.
- Each text is cut to MAX_CHARS unless one row is asked for in full, and a line that is not a complete JSON object
  of the expected shape (a run killed mid-write, a hand-edited file) is skipped and counted, never an error.
"""

from __future__ import annotations

import json
import os
import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from grpo_web.runs.completion_query import Facts, Query, functions, mark, select

FILES = ("completions.jsonl", "completions-sample.jsonl")
MAX_CHARS = 20_000
MAX_LIMIT = 200
MAX_SKIP_NOTES = 20
LINE_CAP_BYTES = 512 << 10  # a line read with its page; longer ones are read once, when indexed
MAX_LINE_BYTES = 64 << 20  # a longer line is never read whole: skipped
SCAN_CHUNK = 1 << 20  # indexing reads the file in slices of this size
MAX_INDEXED_FILES = 64


@dataclass
class Page:
    rows: list[dict] = field(default_factory=list)
    total: int = 0
    skipped: int = 0
    skip_notes: list[dict] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    source: str | None = None
    total_unfiltered: int = 0  # rows of the step (or file) before the filters
    functions: list[str] = field(default_factory=list)  # the reward functions scored in the step

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "total": self.total,
            "total_unfiltered": self.total_unfiltered,
            "skipped": self.skipped,
            "skipped_lines": self.skip_notes,
            "steps": self.steps,
            "source": self.source,
            "functions": self.functions,
        }


def source(output_dir: str | Path) -> Path | None:
    for name in FILES:
        path = Path(output_dir) / name
        if path.is_file():
            return path
    return None


def as_text(value: Any) -> str:
    """A prompt or completion as text: a string as it is; chat messages as `role: content` lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        parts = []
        for message in value:
            content = message.get("content")
            if isinstance(content, list):  # multimodal parts: their text
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            parts.append(
                f"{message.get('role', '?')}: {content if isinstance(content, str) else json.dumps(content)}"
                if len(value) > 1 or message.get("role") not in ("assistant", None)
                else str(content)
            )
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def normalise(record: Any) -> dict | None:
    """The row the API serves, or None when the record is not a completion row."""
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("step"), int)
        or isinstance(record.get("step"), bool)
        or "completion" not in record
    ):
        return None
    rewards = record.get("rewards") if isinstance(record.get("rewards"), dict) else {}
    rewards = {str(k): _number(v) for k, v in rewards.items()}
    total = _number(record.get("reward"))
    if total is None and rewards:
        total = sum(v for v in rewards.values() if v is not None)
    completion = as_text(record.get("completion"))
    length = record.get("length")
    return {
        "step": record["step"],
        "prompt": as_text(record.get("prompt", "")),
        "completion": completion,
        "rewards": rewards,
        "reward": total,
        "advantage": _number(record.get("advantage")),
        "length": length if isinstance(length, int) and not isinstance(length, bool) else None,
        "truncated": record.get("truncated") if isinstance(record.get("truncated"), bool) else None,
    }


def parse_line(line: bytes) -> tuple[dict | None, str | None]:
    """(row, None), or (None, why the line is not a completion row)."""
    try:
        row = normalise(json.loads(line))
    except (ValueError, RecursionError) as error:
        return None, f"not JSON: {str(error)[:120]}"
    return (row, None) if row is not None else (None, "not a completion row (needs step and completion)")


def cut(row: dict, chars: int | None) -> dict:
    out = dict(row)
    for name in ("prompt", "completion"):
        text = row[name]
        out[f"{name}_chars"] = len(text)
        out[f"{name}_cut"] = chars is not None and len(text) > chars
        if out[f"{name}_cut"]:
            out[name] = text[:chars]
    return out


class LineIndex:
    """The rows of one completions file: where each complete line is, and its step; the lines skipped."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()
        self._reset(None)

    def _reset(self, status: os.stat_result | None) -> None:
        self.inode = status.st_ino if status else None
        self.size = 0  # bytes looked at: the end of the last complete line
        self.mtime_ns = None
        self.lines = 0  # complete lines seen
        self.offsets, self.lengths = array("q"), array("q")
        self.by_step: dict[int, array] = {}
        self.facts: list[Facts] = []  # per row: what it is filtered, sorted and marked by
        self.groups: list[array] = []  # group -> its rows (consecutive rows of one step with one prompt)
        self._last_prompt: dict[int, tuple[int, int]] = {}  # step -> (its last row's prompt hash, group)
        self.big: dict[int, dict] = {}  # row index -> its row, already cut (lines over LINE_CAP_BYTES)
        self.skipped = 0
        self.skip_notes: list[dict] = []
        self.tail: dict | None = None  # the incomplete last line, when there is one

    def refresh(self) -> None:
        """Bring the index up to date with the file: read only what was appended since the last look."""
        try:
            status = self.path.stat()
        except OSError:
            self._reset(None)
            return
        if (
            status.st_ino != self.inode
            or status.st_size < self.size
            or (
                status.st_size == self.size
                and status.st_mtime_ns != self.mtime_ns
                and self.mtime_ns is not None
                and self.tail is None
            )
        ):
            self._reset(status)
        if status.st_size != self.size or self.mtime_ns is None:
            self._scan(status.st_size)
        self.mtime_ns = status.st_mtime_ns

    def _skip(self, line_number: int, reason: str) -> None:
        self.skipped += 1
        if len(self.skip_notes) < MAX_SKIP_NOTES:
            self.skip_notes.append({"line": line_number, "reason": reason})

    def _scan(self, size: int) -> None:
        self.tail = None
        with self.path.open("rb") as handle:
            handle.seek(self.size)
            position = start = self.size  # where the chunk starts; where the current line starts
            pending, too_long = bytearray(), False
            while chunk := handle.read(SCAN_CHUNK):
                at = 0
                while True:
                    newline = chunk.find(b"\n", at)
                    piece = chunk[at:] if newline < 0 else chunk[at : newline + 1]
                    if not too_long:
                        too_long = len(pending) + len(piece) > MAX_LINE_BYTES
                        if too_long:
                            pending = bytearray()
                        else:
                            pending += piece
                    if newline < 0:
                        break
                    end = position + newline + 1
                    self._add(start, end - start, bytes(pending), too_long)
                    start, pending, too_long = end, bytearray(), False
                    at = newline + 1
                position += len(chunk)
            self.size = start
            if start < max(position, size):  # no newline yet: still being written, or cut short
                self.tail = {
                    "line": self.lines + 1,
                    "reason": "incomplete last line (still being written, or cut short)",
                }

    def _add(self, offset: int, length: int, line: bytes, too_long: bool) -> None:
        self.lines += 1
        if too_long:
            self._skip(self.lines, f"line of over {MAX_LINE_BYTES >> 20} MiB")
            return
        if not line.strip():
            return
        row, reason = parse_line(line)
        if row is None:
            self._skip(self.lines, reason)
            return
        if not -(1 << 63) <= row["step"] < 1 << 63:
            self._skip(self.lines, "step out of range")
            return
        index = len(self.offsets)
        self.offsets.append(offset)
        self.lengths.append(length)
        self.by_step.setdefault(row["step"], array("q")).append(index)
        self._add_facts(index, row)
        if length > LINE_CAP_BYTES:
            self.big[index] = cut(row, MAX_CHARS)

    def _add_facts(self, index: int, row: dict) -> None:
        prompt = hash(row["prompt"])
        last = self._last_prompt.get(row["step"])
        if last is None or last[0] != prompt:
            last = (prompt, len(self.groups))
            self._last_prompt[row["step"]] = last
            self.groups.append(array("q"))
        self.groups[last[1]].append(index)
        self.facts.append(
            Facts(last[1], row["reward"], row["advantage"], row["length"], row["truncated"], row["rewards"])
        )

    def texts(self, handle, index: int) -> tuple[str, str]:
        """The row's prompt and completion, whole (cut for a line over LINE_CAP_BYTES), for the text search."""
        length = self.lengths[index]
        if length > LINE_CAP_BYTES:
            row = self.big[index]
        else:
            handle.seek(self.offsets[index])
            row, _ = parse_line(handle.read(length))
        return (row["prompt"], row["completion"]) if row is not None else ("", "")

    def read_row(self, handle, index: int, full: bool) -> dict | None:
        length = self.lengths[index]
        if length > LINE_CAP_BYTES and not full:
            return dict(self.big[index])
        handle.seek(self.offsets[index])
        row, _ = parse_line(handle.read(length))
        return cut(row, None if full else MAX_CHARS) if row is not None else None


_indexes: "OrderedDict[str, LineIndex]" = OrderedDict()
_indexes_lock = threading.Lock()


def index_of(path: Path) -> LineIndex:
    """The file's index, up to date (kept for the MAX_INDEXED_FILES files looked at last)."""
    key = str(path)
    with _indexes_lock:
        index = _indexes.pop(key, None) or LineIndex(path)
        _indexes[key] = index
        while len(_indexes) > MAX_INDEXED_FILES:
            _indexes.popitem(last=False)
    with index.lock:
        index.refresh()
    return index


def _notes(index: LineIndex) -> tuple[int, list[dict]]:
    notes = list(index.skip_notes)
    skipped = index.skipped
    if index.tail is not None:
        skipped += 1
        if len(notes) < MAX_SKIP_NOTES:
            notes.append(dict(index.tail))
    return skipped, notes


@dataclass(frozen=True)
class Bound:
    """The rows that are one run's in a file its line shares: none past its last step (`step`), none from the
    byte where its successor began appending (`end`, when the service knows it)."""

    step: int | None = None
    end: int | None = None


def _rows_until(index: LineIndex, step: int | None, bound: Bound):
    rows = index.by_step.get(step, array("q")) if step is not None else range(len(index.offsets))
    if bound == Bound():
        return rows
    if step is not None and bound.step is not None and step > bound.step:
        return array("q")
    if step is None and bound.step is not None:
        rows = sorted(row for at, found in index.by_step.items() if at <= bound.step for row in found)
    return array("q", [row for row in rows if bound.end is None or index.offsets[row] < bound.end])


def read_page(
    output_dir: str | Path,
    step: int | None,
    limit: int,
    offset: int,
    full: bool = False,
    query: Query = Query(),
    bound: Bound = Bound(),
) -> Page:
    """The rows of a step (or of the file) that the query shows, in its order, from `offset`; `total` counts
    them all, `total_unfiltered` the step's rows. Each row is marked best or worst of its group by the query's
    score. `bound`: only the rows that are the run's own (none its successor wrote in the same output_dir)."""
    page = Page()
    path = source(output_dir)
    if path is None:
        return page
    page.source = path.name
    index = index_of(path)
    with index.lock:
        rows = _rows_until(index, step, bound)
        page.total_unfiltered = len(rows)
        page.steps = sorted(
            at
            for at, found in index.by_step.items()
            if (bound.step is None or at <= bound.step) and (bound.end is None or index.offsets[found[0]] < bound.end)
        )
        page.skipped, page.skip_notes = _notes(index)
        page.functions = functions(rows, index.facts)
        page.total = len(rows)
        try:
            with path.open("rb") as handle:
                shown = (
                    rows
                    if query == Query()
                    else select(rows, index.facts, query, lambda row_index: index.texts(handle, row_index))
                )
                page.total = len(shown)
                for row_index in shown[offset : offset + limit]:  # row_index: the row's place among the file's rows
                    row = index.read_row(handle, row_index, full)
                    if row is not None:
                        members = index.groups[index.facts[row_index].group]
                        page.rows.append(
                            row | {"index": row_index, "mark": mark(row_index, index.facts, members, query.score)}
                        )
        except OSError:
            pass
    return page


def restart_offset(output_dir: str | Path, first_step: int, after: int = 0) -> int | None:
    """Where a run that resumed the line at `first_step` began appending to the file its parent wrote, worked out
    from the rows alone (for a database from before the service recorded it): the first row of `first_step`, past
    byte `after` (where the parent's own rows begin), that follows a row of a later step, i.e. where the steps went
    back. None when the steps never went back there (the successor began after the parent's last step: the parent's
    last step bounds its rows already)."""
    path = source(output_dir)
    if path is None:
        return None
    index = index_of(path)
    with index.lock:
        starts = index.by_step.get(first_step, array("q"))
        candidates = [row for row in starts if row > 0 and index.offsets[row] > after]
        if not candidates:
            return None
        step_of = {row: at for at, found in index.by_step.items() for row in found}
        for row in candidates:
            if step_of.get(row - 1, first_step) > first_step:
                return int(index.offsets[row])
    return None


def readable_lines(output_dir: str | Path, bound: Bound = Bound()) -> tuple[Path, int, Iterator[bytes]] | None:
    """The file, how many of its lines are not completion rows, and its completion rows' lines as the run wrote
    them, in slices of at most SCAN_CHUNK (the download: JSON lines any reader takes, whatever damage the file has)."""
    path = source(output_dir)
    if path is None:
        return None
    index = index_of(path)
    with index.lock:
        skipped, _ = _notes(index)
        spans = [(index.offsets[row], index.lengths[row]) for row in _rows_until(index, None, bound)]
    return path, skipped, _slices(path, spans)


def _slices(path: Path, spans: list[tuple[int, int]]) -> Iterator[bytes]:
    with path.open("rb") as handle:
        for offset, length in spans:
            handle.seek(offset)
            while length > 0:
                data = handle.read(min(length, SCAN_CHUNK))
                if not data:
                    return
                length -= len(data)
                yield data

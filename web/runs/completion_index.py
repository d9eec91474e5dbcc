"""The index of one completions file, and the cache of the files indexed last.

Each file's index holds its rows (byte offset and length of every complete line, its step, its group and the scores
it is filtered and sorted by: completion_query), built once and extended as the file grows (only the new bytes are
read), rebuilt when the file is replaced or rewritten (another inode, a shorter file, or the same size with another
modification time). A line of up to LINE_CAP_BYTES is read when its page is asked for; a longer one (a completion of
megabytes) is read once, while it is indexed, and its row is kept already cut. A line over MAX_LINE_BYTES is never
read whole: it is skipped, and counted, as is a line that is not a completion row.
"""

from __future__ import annotations

import os
import threading
from array import array
from collections import OrderedDict
from pathlib import Path

from grpo_web.runs.completion_query import Facts
from grpo_web.runs.completion_rows import MAX_CHARS, cut, parse_line

MAX_SKIP_NOTES = 20
LINE_CAP_BYTES = 512 << 10  # a line read with its page; longer ones are read once, when indexed
MAX_LINE_BYTES = 64 << 20  # a longer line is never read whole: skipped
SCAN_CHUNK = 1 << 20  # indexing reads the file in slices of this size
MAX_INDEXED_FILES = 64


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


def notes(index: LineIndex) -> tuple[int, list[dict]]:
    """The lines skipped: how many (the incomplete last line included) and the first MAX_SKIP_NOTES, each with why."""
    notes = list(index.skip_notes)
    skipped = index.skipped
    if index.tail is not None:
        skipped += 1
        if len(notes) < MAX_SKIP_NOTES:
            notes.append(dict(index.tail))
    return skipped, notes

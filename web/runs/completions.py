"""Reading a run's completions: OUTPUT_DIR/completions.jsonl (log_completions), else the runtime's small sample
(completions-sample.jsonl). grpo_runtime.outputs.completions writes them; this reader never imports the runtime.

Reading is bounded and forgiving: rows come a page at a time, each text cut to MAX_CHARS unless one row is asked
for in full, and a line that is not a complete JSON object of the expected shape (a run killed mid-write, a
hand-edited file) is skipped and counted, never an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

FILES = ("completions.jsonl", "completions-sample.jsonl")
MAX_CHARS = 20_000
MAX_LIMIT = 200
MAX_SKIP_NOTES = 20


@dataclass
class Page:
    rows: list[dict] = field(default_factory=list)
    total: int = 0
    skipped: int = 0
    skip_notes: list[dict] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "total": self.total, "skipped": self.skipped, "skipped_lines": self.skip_notes,
                "steps": self.steps, "source": self.source}


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
            parts.append(f"{message.get('role', '?')}: {content if isinstance(content, str) else json.dumps(content)}"
                         if len(value) > 1 or message.get("role") not in ("assistant", None)
                         else str(content))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def normalise(record: Any) -> dict | None:
    """The row the API serves, or None when the record is not a completion row."""
    if not isinstance(record, dict) or not isinstance(record.get("step"), int) or "completion" not in record:
        return None
    rewards = record.get("rewards") if isinstance(record.get("rewards"), dict) else {}
    rewards = {str(k): _number(v) for k, v in rewards.items()}
    total = _number(record.get("reward"))
    if total is None and rewards:
        total = sum(v for v in rewards.values() if v is not None)
    completion = as_text(record.get("completion"))
    length = record.get("length")
    return {"step": record["step"], "prompt": as_text(record.get("prompt", "")), "completion": completion,
            "rewards": rewards, "reward": total, "advantage": _number(record.get("advantage")),
            "length": length if isinstance(length, int) and not isinstance(length, bool) else None,
            "truncated": record.get("truncated") if isinstance(record.get("truncated"), bool) else None}


def _lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes, complete) for each line; the last one is incomplete when it has no newline."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            yield number, line, line.endswith(b"\n")


def records(path: Path, page: Page) -> Iterator[dict]:
    for number, line, complete in _lines(path):
        if not line.strip():
            continue
        reason = None
        row = None
        if not complete:
            reason = "incomplete last line (still being written, or cut short)"
        else:
            try:
                row = normalise(json.loads(line))
                reason = None if row is not None else "not a completion row (needs step and completion)"
            except ValueError as error:
                reason = f"not JSON: {str(error)[:120]}"
        if reason:
            page.skipped += 1
            if len(page.skip_notes) < MAX_SKIP_NOTES:
                page.skip_notes.append({"line": number, "reason": reason})
            continue
        yield row


def cut(row: dict, chars: int | None) -> dict:
    out = dict(row)
    for name in ("prompt", "completion"):
        text = row[name]
        out[f"{name}_chars"] = len(text)
        out[f"{name}_cut"] = chars is not None and len(text) > chars
        if out[f"{name}_cut"]:
            out[name] = text[:chars]
    return out


def read_page(output_dir: str | Path, step: int | None, limit: int, offset: int, full: bool = False) -> Page:
    page = Page()
    path = source(output_dir)
    if path is None:
        return page
    page.source = path.name
    steps: set[int] = set()
    for index, row in enumerate(records(path, page)):  # index: the row's place in the whole file's rows
        steps.add(row["step"])
        if step is not None and row["step"] != step:
            continue
        if offset <= page.total < offset + limit:
            page.rows.append(cut(row, None if full else MAX_CHARS) | {"index": index})
        page.total += 1
    page.steps = sorted(steps)
    return page

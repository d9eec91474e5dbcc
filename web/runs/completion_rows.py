"""One line of a completions file read into the row the API serves: the record's shape checked (a line that is not a
complete JSON object of that shape is reported, never an error), chat messages as text, each text cut to MAX_CHARS
unless the row is asked for in full."""

from __future__ import annotations

import json
from typing import Any

MAX_CHARS = 20_000


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

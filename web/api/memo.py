"""The answers of POST /api/v1/validate kept for bodies sent again: the form re-sends a recipe unchanged (undo,
focus, the check before a launch), a team's CI validates the same committed files on every push.

The check is a pure function of what the key holds: the body's bytes, whether they are YAML or JSON, the world
size, the path and the TRL release judged against. A body whose answer also depends on files on this machine (a
`# grpo: --hardware` comment reads model configs for the memory fit) is never kept. The key holds the body itself,
not a digest of it, so two bodies share an answer only when they are the same bytes.

Bounded in bytes (bodies and answers together, the operator's `validate_cache_bytes`; 0 turns it off) and least
recently used first out. Used from the event loop only, so it needs no lock.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Hashable

# Bookkeeping per entry (the key tuple, the OrderedDict node), so that many tiny bodies still count against the bound.
ENTRY_OVERHEAD_BYTES = 200


class AnswerCache:
    """Rendered answers (JSON bytes) by request key, least recently used evicted first."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.used_bytes = 0
        self.hits = self.misses = 0
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def key(body: bytes, media_type: str, options: dict[str, Any]) -> tuple | None:
        """The key of a request, or None when its answer must not be kept (see the module docstring)."""
        if b"--hardware" in body:
            return None
        return (
            body,
            media_type,
            options["world_size"],
            options["path"],
            options["trl_version"],
            options["trl_version_source"],
        )

    def get(self, key: tuple | None) -> bytes | None:
        found = self._entries.get(key) if key is not None else None
        if found is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return found

    def put(self, key: tuple | None, answer: bytes) -> None:
        if key is None:
            return
        size = _size(key, answer)
        if size > self.max_bytes // 4:  # one huge body must not flush everything else
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.used_bytes -= _size(key, old)
        self._entries[key] = answer
        self.used_bytes += size
        while self.used_bytes > self.max_bytes:
            evicted_key, evicted = self._entries.popitem(last=False)
            self.used_bytes -= _size(evicted_key, evicted)


def _size(key: tuple, answer: bytes) -> int:
    return len(key[0]) + len(key[3]) + len(answer) + ENTRY_OVERHEAD_BYTES

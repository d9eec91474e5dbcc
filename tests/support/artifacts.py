"""Files the tests leave under test-artifacts/ for a person to read, written safely beside another test process
(the suite runs in several workers, each with a part of a module's tests)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive lock on `path`.lock while the body runs: one process at a time reads and writes `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def merge_json(path: Path, entries: dict, **dump) -> None:
    """Add `entries` to the JSON object in `path` (created when absent), keeping what other processes wrote; `dump`:
    json.dumps's options (indent 2 unless given)."""
    with locked(path):
        try:
            found = json.loads(path.read_text())
        except (OSError, ValueError):
            found = {}
        found = found if isinstance(found, dict) else {}
        temporary = path.with_name(f"{path.name}.{os.getpid()}")
        temporary.write_text(json.dumps({**found, **entries}, **{"indent": 2, **dump}) + "\n")
        temporary.replace(path)

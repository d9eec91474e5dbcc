"""Trainer states shaped like real runs of every TRL era (tests/health/data, written by make_states.py), read as
data or laid out as a finished run's folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "health" / "data"


def state(name: str) -> dict:
    """The trainer state `name` (a file stem under tests/health/data) as a dict."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def run_dir(tmp_path: Path, name: str) -> Path:
    """A run folder under `tmp_path` holding the state `name` as its trainer_state.json."""
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(DATA / f"{name}.json", folder / "trainer_state.json")
    return folder

"""verl 0.9.1 as an oracle: one process of .venv-verl's interpreter answers every case (tests/verl/oracle_child.py).

Found at GRPO_VERL_PYTHON or ./.venv-verl (scripts/setup-verl.sh). Without it the tests that need it skip, saying
why, and fail under CI=true, where scripts/test.sh has built it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("oracle_child.py")


def verl_python() -> Path | None:
    configured = os.environ.get("GRPO_VERL_PYTHON")
    candidate = Path(configured) if configured else ROOT / ".venv-verl" / "bin" / "python"
    return candidate if candidate.exists() else None


def require_verl() -> Path:
    python = verl_python()
    if python is None:
        reason = (
            "no verl environment: scripts/setup-verl.sh builds .venv-verl (or set GRPO_VERL_PYTHON); "
            "scripts/test.sh builds it"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return python


def _cache_file(python: Path) -> Path:
    """Answers kept beside the environment that gave them (a rebuilt environment starts a new cache)."""
    return python.parent.parent / "grpo-oracle-answers.json"


def ask(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """verl's verdicts on all the cases: the ones not answered before, from one process; the rest from the cache
    (verl's answer to a question does not change while its environment stays the same)."""
    python = require_verl()
    cache_path = _cache_file(python)
    try:
        cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    except (OSError, ValueError):
        cache = {}
    keys = [json.dumps(case, sort_keys=True) for case in cases]
    missing = list(dict.fromkeys(k for k in keys if k not in cache))
    if missing:
        done = subprocess.run(
            [str(python), str(CHILD)],
            input="[" + ",".join(missing) + "]",
            capture_output=True,
            text=True,
            timeout=1800,
            env={**os.environ, "VERL_USE_EXTERNAL_PLUGINS": "none"},
        )
        if done.returncode != 0:
            raise AssertionError(f"the verl oracle failed: {done.stderr[-2000:]}")
        cache.update(zip(missing, json.loads(done.stdout)))
        try:
            cache_path.write_text(json.dumps(cache))
        except OSError:
            pass  # a read-only environment: answered again next time
    return [cache[k] for k in keys]


__all__ = ["ask", "require_verl", "verl_python"]

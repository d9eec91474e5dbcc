"""verl 0.9.1 as an oracle: one process of .venv-verl's interpreter answers every case (tests/verl/oracle_child.py).

Found at GRPO_VERL_PYTHON or ./.venv-verl (scripts/setup-verl.sh). Without it the tests that need it skip, saying
why, and fail under CI=true, where scripts/test.sh has built it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
        reason = ("no verl environment: scripts/setup-verl.sh builds .venv-verl (or set GRPO_VERL_PYTHON); "
                  "scripts/test.sh builds it")
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return python


def ask(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """verl's verdicts on all the cases, from one process."""
    python = require_verl()
    done = subprocess.run([str(python), str(CHILD)], input=json.dumps(cases), capture_output=True, text=True,
                          timeout=900, env={**os.environ, "VERL_USE_EXTERNAL_PLUGINS": "none"})
    if done.returncode != 0:
        raise AssertionError(f"the verl oracle failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


__all__ = ["ask", "require_verl", "verl_python", "sys"]

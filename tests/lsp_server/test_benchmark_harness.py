"""benchmarks/lsp.py runs end to end on a few keystrokes (no timing asserts: targets live in benchmarks/)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO


def test_the_keystroke_benchmark_measures_every_edit():
    pytest.importorskip("pygls", reason="grpo lsp needs the lsp extra")
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "lsp.py"), "--edits", "30", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO)},
    )
    result = json.loads(done.stdout)
    assert result["lines"] == 200 and result["edits"] == 30
    assert 0 < result["p50_ms"] <= result["p99_ms"] <= result["max_ms"]
    assert "GRPO-B001" in result["codes_seen"]  # the edits pass through an invalid batch and back

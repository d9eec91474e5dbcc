"""The code passes its linter and formatter: `ruff check` with the rules pyproject.toml selects ([tool.ruff.lint]) and
`ruff format --check` over the tree ([tool.ruff.format])."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHECKED = ("grpo_schema", "grpo_runtime", "web", "scripts", "benchmarks")


def _ruff() -> list[str]:
    beside = Path(sys.executable).with_name("ruff")  # the test extra installs it beside this interpreter
    found = str(beside) if beside.is_file() else shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is in the test extra (pip install -e '.[test]')")
    return [found]


def test_ruff_finds_nothing():
    done = subprocess.run(
        [*_ruff(), "check", "--no-cache", "--output-format", "concise", *CHECKED],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_noqa_comment_silences_a_finding():
    done = subprocess.run(
        [*_ruff(), "check", "--no-cache", "--extend-select", "RUF100", "--output-format", "concise", *CHECKED],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, "unused noqa comments:\n" + done.stdout


def test_the_tree_is_formatted():
    """`ruff format` ([tool.ruff.format]) leaves every file as it is: run it to format what this names."""
    done = subprocess.run(
        [*_ruff(), "format", "--no-cache", "--check", "."], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, "files to format (run `ruff format`):\n" + done.stdout + done.stderr

"""The service's folder of the plan-reads tests and `grpo validate` run in it: the Demo recipe's demo/model and
demo/data as `grpo demo demo` writes them, a `grpo serve --enable-runs` over that folder, and the prompt-length line
both the service's plan and `grpo validate --hardware` print."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import grpo

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo.yaml"
PROMPT_LINE = "assumes prompts of "


@pytest.fixture
def folder(tmp_path, assets):
    """A service's folder with the Demo recipe's demo/model and demo/data (as `grpo demo demo` writes them)."""
    base = tmp_path / "checkout"
    shutil.copytree(assets.model, base / "demo" / "model")
    shutil.copytree(assets.data, base / "demo" / "data")
    return base


@pytest.fixture
def service(make_service, folder):
    return make_service(cwd=folder, GRPO_WEB_RUNS_PREPARE_DEMO="0")


def validate(folder: Path, text: str, hardware: str) -> dict:
    """`grpo validate FILE --hardware SPEC --format json` run in the service's folder: its file object."""
    path = folder / "run.yaml"
    path.write_text(text)
    run = grpo("validate", "run.yaml", "--hardware", hardware, "--format", "json", cwd=folder)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)["files"][0]


def prompt_line(lines: list[str]) -> str:
    return next(line for line in lines if line.startswith(PROMPT_LINE))

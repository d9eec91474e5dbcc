"""The public Python API is typed: mypy --strict passes on its modules and on a program that uses it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="mypy is in the test extra (pip install -e '.[test]')")

REPO = Path(__file__).resolve().parents[2]

USER_PROGRAM = """
from grpo_schema import GRPORunConfig, RunPlan, check_text
from grpo_schema.engine.diagnostics import Diagnostic

config = GRPORunConfig(num_generations=4, per_device_train_batch_size=4)
generations: int = config.num_generations
beta: float = config.beta
warnings: list[Diagnostic] = config.diagnostics
plan: RunPlan | None = config.plan
text: str = config.to_yaml()
again: GRPORunConfig = GRPORunConfig.from_yaml(text, world_size=2)
valid: bool = check_text(text).valid
"""


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_public_modules_pass_mypy_strict():
    """`mypy` reads [tool.mypy] in pyproject.toml: strict, on the public modules."""
    done = mypy()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout


@pytest.mark.slow
def test_a_user_program_is_checked_against_the_real_types(tmp_path):
    program = tmp_path / "user.py"
    program.write_text(USER_PROGRAM)
    assert mypy("--strict", str(program)).returncode == 0
    program.write_text(USER_PROGRAM + "wrong: str = config.num_generations\n")
    done = mypy("--strict", str(program))
    assert done.returncode == 1 and 'Incompatible types in assignment (expression has type "int"' in done.stdout

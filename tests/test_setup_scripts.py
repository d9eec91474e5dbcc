"""The set-up scripts keep each environment apart.

scripts/test.sh exports VENV (the main environment) for everything it runs. A script that builds another environment
(verl's, vLLM's, the schedulers') and also read VENV would install into the main one instead: verl's pins then replace
the main environment's transformers in the middle of a CI run. So each of those scripts reads a variable of its own.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
OWN_ENVIRONMENTS = {"setup-verl.sh": "VERL_VENV", "setup-vllm.sh": "VLLM_VENV", "setup-emit.sh": "EMIT_VENV"}


@pytest.mark.parametrize("script", sorted(OWN_ENVIRONMENTS))
def test_a_sub_environment_script_ignores_the_exported_main_venv(script: str, tmp_path: Path) -> None:
    text = (SCRIPTS / script).read_text()
    assert "${VENV:-" not in text, f"{script} would build into an exported VENV"
    assert f"${{{OWN_ENVIRONMENTS[script]}:-" in text


def test_setup_verl_with_venv_exported_checks_its_own_folder(tmp_path: Path) -> None:
    # A real run of the script's first step with VENV exported: where it looks says where it would install.
    fake = tmp_path / "own" / "bin"
    fake.mkdir(parents=True)
    python = fake / "python"
    python.write_text("#!/bin/sh\nexit 0\n")  # answers "verl 0.9.1 already there", so the script stops at once
    python.chmod(0o755)
    env = dict(os.environ, VENV=str(tmp_path / "main"), VERL_VENV=str(tmp_path / "own"))
    out = subprocess.run(["bash", str(SCRIPTS / "setup-verl.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert str(tmp_path / "own") in out.stdout
    assert not (tmp_path / "main").exists()

"""The built distribution, not the source tree: scripts/smoke-wheel.sh builds the sdist and wheel, checks them
with twine, installs the wheel into a fresh venv beside web.py (which owns the top-level module `web`) and runs
every console command, the service and a dry run of the demo from it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow


def test_the_wheel_installs_beside_web_py_and_every_command_works(tmp_path):
    for module in ("build", "twine"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (the test extra brings it)")
    env = {**os.environ, "PY": sys.executable, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "smoke-wheel.sh"), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "wheel smoke test passed" in done.stdout
    assert "web.py and grpo_web import side by side" in done.stdout
    wheels = list(Path(tmp_path, "dist").glob("grpo_config-*.whl"))
    assert len(wheels) == 1 and list(Path(tmp_path, "dist").glob("grpo_config-*.tar.gz"))

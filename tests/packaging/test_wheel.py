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

from tests.support.checkout import copy_checkout

pytestmark = pytest.mark.slow


def test_the_wheel_installs_beside_web_py_and_every_command_works(tmp_path):
    """Built from a fresh copy of the checkout (tests/support/checkout.py: builds of the checkout itself collide)."""
    for module in ("build", "twine"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (the test extra brings it)")
    source = copy_checkout(tmp_path / "source")
    env = {**os.environ, "PY": sys.executable, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        ["bash", str(source / "scripts" / "smoke-wheel.sh"), str(tmp_path / "work")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "wheel smoke test passed" in done.stdout
    assert "web.py and grpo_web import side by side" in done.stdout
    wheels = list(Path(tmp_path, "work", "dist").glob("grpo_config-*.whl"))
    assert len(wheels) == 1 and list(Path(tmp_path, "work", "dist").glob("grpo_config-*.tar.gz"))

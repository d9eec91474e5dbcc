"""The GitHub Action (action.yml) runs as GitHub would run its shell steps: in a fresh virtual environment, the
install step installs grpo-config from the action's folder, the validate step annotates the broken lines and sets
the exit status. (actions/setup-python is GitHub's own step; here the fresh venv's python stands in for it.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import venv
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLES, FIXTURES, REPO
from tests.support.checkout import copy_checkout

pytestmark = pytest.mark.slow
ACTION = yaml.safe_load((REPO / "action.yml").read_text())


def shell_steps() -> list[dict]:
    return [step for step in ACTION["runs"]["steps"] if "run" in step]


def substitute(text: str, inputs: dict[str, str], action_path: Path = REPO) -> str:
    values = {
        **{f"inputs.{k}": v.get("default", "") for k, v in ACTION["inputs"].items()},
        **{f"inputs.{k}": v for k, v in inputs.items()},
        "github.action_path": str(action_path),
    }
    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: values[m.group(1)], text)


@pytest.fixture(scope="module")
def runner_env(tmp_path_factory) -> dict[str, str]:
    """A fresh venv first on PATH, as setup-python leaves the runner; the install step runs once in it, from a
    fresh copy of the checkout, as GitHub checks the Action out."""
    action = copy_checkout(tmp_path_factory.mktemp("action"))
    folder = tmp_path_factory.mktemp("action-venv")
    venv.EnvBuilder(with_pip=True).create(folder)
    env = {
        **os.environ,
        "PATH": f"{folder / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("PYTHONPATH", None)
    install = shell_steps()[0]
    done = subprocess.run(
        ["bash", "-c", substitute(install["run"], {}, action)],
        env=env,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return env


def run_validate(env: dict[str, str], cwd: Path, **inputs: str) -> subprocess.CompletedProcess:
    step = shell_steps()[1]
    step_env = {**env, **{k: substitute(v, inputs) for k, v in step["env"].items()}}
    # GitHub runs a `shell: bash` step as `bash --noprofile --norc -eo pipefail {0}`.
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        env=step_env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_action_declares_a_composite_with_a_slim_install():
    assert ACTION["runs"]["using"] == "composite"
    assert [s.get("uses", "").split("@")[0] for s in ACTION["runs"]["steps"]][0] == "actions/setup-python"
    assert len(shell_steps()) == 3  # install, validate, and the optional smoke test
    assert shell_steps()[2]["if"] == "${{ inputs.smoke == 'true' }}" and ACTION["inputs"]["smoke"]["default"] == "false"


def test_valid_recipes_pass(runner_env, tmp_path):
    done = run_validate(
        runner_env, REPO, paths=" ".join(str(p) for p in sorted(EXAMPLES.glob("*.yaml")) if p.stem != "open-r1")
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::error" not in done.stdout
    probe = "import grpo_schema, sys; print(grpo_schema.__file__, 'torch' in sys.modules)"
    imported = subprocess.run(["python", "-c", probe], env=runner_env, capture_output=True, text=True, cwd=tmp_path)
    assert str(REPO) not in imported.stdout and imported.stdout.strip().endswith("False")


def test_broken_configs_are_annotated_and_fail(runner_env, tmp_path):
    broken = FIXTURES / "invalid" / "batch-not-multiple.yaml"
    sarif = tmp_path / "grpo.sarif"
    done = run_validate(runner_env, REPO, paths=str(broken), **{"world-size": "1", "sarif-file": str(sarif)})
    assert done.returncode == 1
    assert re.search(rf"::error file={re.escape(str(broken))},line=\d+,col=1,title=GRPO-B001::", done.stdout)
    assert json.loads(sarif.read_text())["runs"][0]["results"][0]["ruleId"] == "GRPO-B001"


def test_profiles_and_strict_reach_the_validator(runner_env):
    recipe = str(EXAMPLES / "open-r1.yaml")
    assert run_validate(runner_env, REPO, paths=recipe).returncode == 1  # open-r1 keys without the profile
    assert run_validate(runner_env, REPO, paths=recipe, profiles="open-r1").returncode == 0
    warned = str(FIXTURES / "invalid" / "deprecated-cap.yaml")
    assert run_validate(runner_env, REPO, paths=warned).returncode == 0
    assert run_validate(runner_env, REPO, paths=warned, strict="true").returncode == 1

"""The pre-commit hooks of .pre-commit-hooks.yaml run what they say, on the files they select."""

from __future__ import annotations

import re
import shlex

import yaml

from tests.conftest import REPO
from tests.editor.conftest import DATA, SCHEMAS
from tests.support.cli import grpo

HOOKS = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}


def run_hook(hook: dict, args: list[str], files: list[str]) -> int:
    """What pre-commit runs: entry + args + file names, `grpo` run in process."""
    command = shlex.split(hook["entry"]) + args + (files if hook.get("pass_filenames", True) else [])
    assert command[0] == "grpo"
    return grpo(*command[1:], cwd=REPO).returncode


def test_hooks_are_declared():
    assert set(HOOKS) == {"grpo-validate", "grpo-validate-python", "grpo-schema-fresh"}
    for hook in HOOKS.values():
        assert hook["language"] == "python" and hook["name"] and hook["description"]


def test_grpo_validate_selects_grpo_configs_and_fails_on_errors(tmp_path):
    hook = HOOKS["grpo-validate"]
    pattern = re.compile(hook["files"])
    assert pattern.search("recipes/qwen.grpo.yaml") and pattern.search("run.grpo.yml")
    assert not pattern.search(".github/workflows/ci.yml")
    good = tmp_path / "ok.grpo.yaml"
    good.write_text(
        "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/DeepMath-103K\n"
        "reward_funcs: [accuracy_reward]\n"
    )
    assert run_hook(hook, [], [str(good)]) == 0
    assert run_hook(hook, [], [str(good), str(DATA / "mistakes.grpo.yaml")]) == 1


def test_grpo_schema_fresh_compares_the_committed_copy():
    hook = HOOKS["grpo-schema-fresh"]
    assert hook["args"][:1] == ["--output"]
    assert run_hook(hook, ["--output", str(SCHEMAS / "grpo-config.schema.json")], []) == 0
    assert run_hook(hook, ["--output", str(SCHEMAS / "grpo-config.open-r1.schema.json")], []) == 1
    assert (
        run_hook(hook, ["--output", str(SCHEMAS / "grpo-config.open-r1.schema.json"), "--profile", "open-r1"], []) == 0
    )

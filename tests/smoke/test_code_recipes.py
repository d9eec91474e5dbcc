"""`grpo smoke` on the real open-r1 recipes whose rewards run completions' code (../shared/grpo-corpus/valid, files
nobody here wrote; skipped, with the reason, when the shared corpus is absent), as users have them after `grpo
migrate --profile open-r1` (benchmarks/smoke.py's corpus_recipes): each passes with the remote sandbox it asks for
substituted by this machine's local executor, said so in the report, and the reference solutions checked; one
smokes twice with the same report. About 1 minute a file on an idle 2-core machine (all: about 6).

14 comes from a pull-request branch of open-r1 whose `code_eval_partial_grading: true` main's script does not
read (the file is invalid as written, so the corpus benchmark leaves it out): it is smoked as a user fixes it, with
main's spelling of the same choice, `code_eval_scoring_mode: partial`."""

import json

import pytest

from tests.conftest import REPO

from .test_determinism import comparable
from .test_examples import grpo

pytestmark = pytest.mark.slow
CORPUS = REPO.parent / "shared" / "grpo-corpus" / "valid"
RECIPES = {  # file: (reward, the sandbox the recipe asks for)
    "03_open-r1_Qwen2.5-1.5B-Instruct_config_demo_code.yaml": ("code", "E2B's hosted sandboxes"),
    "04_open-r1_Qwen2.5-1.5B-Instruct_config_demo_code_ioi.yaml": ("ioi_code", "Piston workers"),
    "05_open-r1_Qwen2.5-Coder-7B-Instruct_config_codeforces.yaml": ("cf_code", "Piston workers"),
    "14_open-r1_Qwen2.5-Coder-7B-Instruct_config_codeforces_partial.yaml": ("cf_code", "Piston workers"),
    "16_open-r1_Qwen2.5-7B-Instruct_config_v05.30.yaml": ("binary_code", "through the router at ip-10-53-86-47:8000"),
}
absent = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")


def migrated(tmp_path, name: str):
    target = tmp_path / name
    target.write_bytes((CORPUS / name).read_bytes())
    assert grpo("migrate", "--profile", "open-r1", "--write", str(target), cwd=tmp_path).returncode == 0
    if name.startswith("14_"):
        text = target.read_text(encoding="utf-8")
        assert "code_eval_partial_grading: true" in text
        target.write_text(text.replace("code_eval_partial_grading: true", "code_eval_scoring_mode: partial"))
    return target


def smoke(tmp_path, path) -> dict:
    done = grpo("smoke", str(path), "--format", "json", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["passed"], {k: report.get(k) for k in ("component", "error", "log")}
    return report


TWICE = "16_open-r1_Qwen2.5-7B-Instruct_config_v05.30.yaml"  # the quickest: smoked twice below


def check_stated(report: dict, name: str) -> None:
    reward, sandbox = RECIPES[name]
    groups = {g["group"]: (g["status"], g["detail"]) for g in report["groups"]}
    status, detail = groups["code execution"]
    assert status == "substituted" and detail.startswith(f"{reward}: ") and sandbox in detail, detail
    assert "-> this machine's local executor" in detail and "checked before the run" in detail
    assert "small real programming problems" in groups["dataset"][1]
    assert groups["reward functions"][0] == "exercised" and f"{reward}_reward" in groups["reward functions"][1]
    rewards = {key for row in report["completions"] for key in row["rewards"]}
    assert f"{reward}_reward" in rewards  # scored on the completions the run generated


@absent
@pytest.mark.parametrize("name", sorted(set(RECIPES) - {TWICE}))
def test_a_code_recipe_smokes_with_the_sandbox_substituted_and_said(tmp_path, name):
    check_stated(smoke(tmp_path, migrated(tmp_path, name)), name)


@absent
def test_a_code_recipe_smokes_the_same_twice(tmp_path):
    path = migrated(tmp_path, TWICE)
    first, second = smoke(tmp_path, path), smoke(tmp_path, path)
    check_stated(first, TWICE)
    assert comparable(first) == comparable(second)

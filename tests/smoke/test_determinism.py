"""The same file gives the same smoke report: the same verdict, the same substitutions and the same generated
completions and rewards, on an idle machine and with a CPU-bound process beside it. Run on a few corpus recipes
(real files nobody here wrote, as users have them after `grpo migrate`; skipped, with the reason, when the shared
corpus is absent): TRL's own, an open-r1 recipe with a system prompt, and one that smokes on 2 CPU processes."""

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

from .test_examples import grpo

pytestmark = pytest.mark.slow
CORPUS = REPO.parent / "shared" / "grpo-corpus" / "valid"
RECIPES = {
    "33_trl_clis_grpo_basic.yaml": 1,
    "06_open-r1_Qwen2.5-Math-7B_config_simple_rl_v1.yaml": 1,
    "18_open-r1_Doge-20M-Instruct_config_full.yaml": 2,
}  # file: the world size it smokes at


def comparable(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "seconds"}


def smoked(path, cwd) -> dict:
    done = grpo("smoke", str(path), "--format", "json", cwd=cwd)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["passed"], {k: report.get(k) for k in ("component", "error", "log")}
    return report


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_corpus_recipe_smokes_the_same_twice_also_beside_a_busy_process(tmp_path, name):
    path = tmp_path / name
    path.write_bytes((CORPUS / name).read_bytes())
    assert grpo("migrate", "--profile", "open-r1", "--write", str(path), cwd=tmp_path).returncode == 0
    first = smoked(path, tmp_path)
    busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
    try:
        second = smoked(path, tmp_path)
    finally:
        busy.kill()
        busy.wait()
    assert first["completions"] and first["completions_digest"], first  # what it generated is in the report
    assert first["world_size"] == RECIPES[name]
    assert comparable(first) == comparable(second)

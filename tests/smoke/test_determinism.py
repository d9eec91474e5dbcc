"""The same file gives the same smoke report: the same verdict, the same substitutions and the same generated
completions and rewards, on an idle machine and with a CPU-bound process beside it. Run on the cheapest corpus
recipe (a real file nobody here wrote; skipped, with the reason, when the shared corpus is absent)."""

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

from .test_examples import grpo

pytestmark = pytest.mark.slow
CORPUS = REPO.parent / "shared" / "grpo-corpus" / "valid"
CHEAPEST = "33_trl_clis_grpo_basic.yaml"


def comparable(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "seconds"}


@pytest.mark.skipif(not (CORPUS / CHEAPEST).is_file(), reason=f"the shared corpus is not at {CORPUS}")
def test_a_corpus_recipe_smokes_the_same_twice_also_beside_a_busy_process(tmp_path):
    first = grpo("smoke", str(CORPUS / CHEAPEST), "--format", "json", cwd=tmp_path)
    busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
    try:
        second = grpo("smoke", str(CORPUS / CHEAPEST), "--format", "json", cwd=tmp_path)
    finally:
        busy.kill()
        busy.wait()
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert a["passed"] and b["passed"], (a.get("error"), b.get("error"))
    assert a["completions"] and a["completions_digest"], a  # what it generated is in the report
    assert comparable(a) == comparable(b)

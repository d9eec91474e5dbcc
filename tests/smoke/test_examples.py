"""`grpo smoke` passes on the examples and on the corpus files `grpo train --dry-run` accepts, each as its own
`grpo smoke --format json` process from a scratch working directory (as a user or CI runs it); the corpus is in
test_corpus.py.

By default a representative set of examples runs (a reference model, LoRA, a mixture, an open-r1 recipe for 7
processes, ZeRO-3 with vLLM); GRPO_SMOKE_ALL=1 runs every example."""

import json
import os

import pytest

from tests.conftest import EXAMPLES, REPO
from tests.support.cli import grpo as grpo_command

pytestmark = pytest.mark.slow
REPRESENTATIVE = ["grpo.yaml", "lora-single-gpu.yaml", "dataset-mixture.yaml", "open-r1.yaml", "multinode-zero3.yaml"]
EVERY = sorted(p.name for p in EXAMPLES.glob("*.yaml"))


def grpo(*args, cwd):
    """A process per recipe: each smoke trains in a torch of its own (threads, seeds, caches)."""
    pythonpath = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return grpo_command(*args, cwd=cwd, env={"PYTHONPATH": pythonpath}, timeout=600, subprocess=True)


@pytest.mark.parametrize("name", EVERY if os.environ.get("GRPO_SMOKE_ALL") else REPRESENTATIVE)
def test_the_example_smoke_passes(name, tmp_path):
    done = grpo("smoke", str(EXAMPLES / name), "--format", "json", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["passed"], {k: report.get(k) for k in ("component", "error", "log")}
    statuses = {g["group"]: g["status"] for g in report["groups"]}
    assert statuses["reward functions"] == "exercised" and statuses["checkpoint save and resume"] == "exercised"
    assert report["seconds"] < 180

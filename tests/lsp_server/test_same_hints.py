"""The editor says what `grpo validate` says: every diagnostic of a real `grpo lsp` carries the CLI's code, line and
hint word for word, the batch rules' "smallest edits: ..." included (one text, from the engine's fix search)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.cli import grpo
from tests.support.lsp import QWEN

BASE = "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/DeepMath-103K\nreward_funcs: [accuracy_reward]\n"
FILES = {
    "partial-groups": QWEN.read_text(),  # GRPO-B001 and a renamed key
    "both-set": BASE + "per_device_train_batch_size: 4\nnum_generations: 4\ngeneration_batch_size: 16\n"
    "steps_per_generation: 4\n",  # GRPO-B002
    "not-micro-batches": BASE + "per_device_train_batch_size: 4\nnum_generations: 2\ngeneration_batch_size: 18\n",
    "eval-groups": BASE + "per_device_train_batch_size: 4\nnum_generations: 4\neval_strategy: steps\n"
    "per_device_eval_batch_size: 3\n",  # GRPO-B004
    "comment-world-size": "# grpo: --world-size 3\n" + BASE + "per_device_train_batch_size: 4\nnum_generations: 8\n",
}


def cli_diagnostics(path: Path) -> list[tuple[str, int | None, str]]:
    done = grpo("validate", "--format", "json", str(path), cwd=REPO)
    assert done.returncode in (0, 1), done.stderr
    return sorted((d["code"], d["line"], d["hint"] or "") for d in json.loads(done.stdout)["files"][0]["diagnostics"])


@pytest.mark.parametrize("name", FILES)
def test_the_editor_shows_the_cli_s_hints(server, tmp_path, name):
    path = tmp_path / f"{name}.grpo.yaml"
    path.write_text(FILES[name])
    expected = cli_diagnostics(path)
    published = server.wait_publish(server.open(path))
    found = sorted((d["code"], d["range"]["start"]["line"] + 1, d["data"]["hint"] or "") for d in published)
    assert found == expected
    batch = [d for d in published if d["code"].startswith("GRPO-B") and d["severity"] == 1]
    assert batch, published  # each file has a batch error, whose hint names the checked edits
    for diagnostic in batch:
        assert diagnostic["data"]["hint"].startswith("smallest edits: ")
        assert diagnostic["message"].endswith("\nhint: " + diagnostic["data"]["hint"])

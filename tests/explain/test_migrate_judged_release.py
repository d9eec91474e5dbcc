"""`grpo migrate --to B` for a file whose keys predate B (an older B than 1.16): the keys B no longer reads are
migrated by B's own rules also where the two tables do not say so (--from B itself, or a key the release it was
written for did not read either), so nothing of an older release is left for B to report."""

from __future__ import annotations

import yaml

from grpo_schema.commands.migrate import MIGRATION_CODES
from tests.support.old_recipe import OLD_014_JUDGED_AT_019, file_object, grpo


def _old_keys(path) -> list[str]:
    found = file_object(str(path))
    return [d["fields"][0] for d in found["diagnostics"] if d["code"] in MIGRATION_CODES]


def test_the_judged_release_s_own_renames_and_removals_from_that_release(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text(OLD_014_JUDGED_AT_019)
    assert sorted(_old_keys(path)) == ["evaluation_strategy", "vllm_device"]
    done = grpo("migrate", str(path), "--from", "0.19", "--to", "0.19", "--write")
    assert done.returncode == 0, done.stderr
    migrated = yaml.safe_load(path.read_text())
    assert migrated["eval_strategy"] == "steps" and "evaluation_strategy" not in migrated
    assert "vllm_device" not in migrated and "# grpo migrate removed `vllm_device: cuda:1`" in path.read_text()
    assert "cannot keep: vllm_device" in done.stderr
    assert migrated["per_device_train_batch_size"] == 2  # written for 0.19 (said so): its batch unit
    assert _old_keys(path) == []


def test_from_an_older_release_to_the_judged_one(tmp_path):
    path = tmp_path / "recipe.yaml"
    path.write_text(OLD_014_JUDGED_AT_019)
    assert grpo("migrate", str(path), "--from", "0.14", "--to", "0.19", "--write").returncode == 0
    migrated = yaml.safe_load(path.read_text())
    assert migrated["per_device_train_batch_size"] == 8  # 2 prompts x 4 completions, as 0.19 counts
    assert migrated["loss_type"] == "grpo" and "vllm_device" not in migrated
    assert "# grpo: --trl-version 0.19.1" in path.read_text() or "# grpo: --trl-version 0.19" in path.read_text()
    assert _old_keys(path) == []

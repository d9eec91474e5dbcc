"""Uploads to the Hub that grpo_runtime does not run (GRPO-U003) are refused before anything loads."""

from __future__ import annotations

import pytest

from grpo_schema.cli import main

RUN = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/DeepMath-103K\n"
    "reward_funcs: [accuracy_reward]\nper_device_train_batch_size: 4\nnum_generations: 4\n"
)


@pytest.mark.parametrize(
    "setting, hint",
    [
        ("log_completions: true\nlog_completions_hub_repo: me/completions\n", "completions.jsonl holds them"),
        ("hub_token: hf_abcdefghijklmnopqrstuvwxyz\n", "set HF_TOKEN in the environment instead"),
    ],
)
def test_a_hub_upload_the_runtime_does_not_run_is_refused_with_exit_3(capsys, tmp_path, setting, hint):
    path = tmp_path / "run.yaml"
    path.write_text(RUN + setting)
    assert main(["train", str(path), "--dry-run"]) == 3
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert "error[GRPO-U003]" in out and hint in out

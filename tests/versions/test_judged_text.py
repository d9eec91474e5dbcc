"""Every text output says which TRL release it judged the file against and why, 1.16 included."""

from __future__ import annotations

import pytest

import grpo_schema.versions.detect as detect
from grpo_schema.cli import main

RECIPE = """model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/tldr
reward_funcs: [think_format_reward]  # 0.19.1's script registers only this one
per_device_train_batch_size: 8
num_generations: 8
"""
OLD = RECIPE + "max_prompt_length: 256\n"


@pytest.fixture
def recipe(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(RECIPE)
    return path


def text_of(capsys, *argv) -> str:
    main(list(map(str, argv)))
    captured = capsys.readouterr()
    return captured.out + captured.err


@pytest.mark.parametrize("command", [["validate"], ["explain"], ["plan", "--hardware", "1xH100-80GB"]])
def test_the_release_and_why_are_said_for_1_16_too(recipe, capsys, monkeypatch, command):
    monkeypatch.setattr(detect, "installed_version", lambda search_path=None: ("1.16.0", "METADATA"))
    said = text_of(capsys, command[0], recipe, *command[1:])
    assert "judged as TRL 1.16.0 (the trl installed beside this Python)" in said, said
    said = text_of(capsys, command[0], recipe, *command[1:], "--trl-version", "1.16")
    assert "judged as TRL 1.16 (--trl-version)" in said, said
    said = text_of(capsys, command[0], recipe, *command[1:], "--trl-version", "0.19")
    assert "judged as TRL 0.19 (--trl-version)" in said, said


def test_a_pin_and_the_default_are_named(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(detect, "installed_version", lambda search_path=None: None)
    (tmp_path / ".git").mkdir()
    config = tmp_path / "run.yaml"
    config.write_text(OLD)
    said = text_of(capsys, "validate", config)
    assert "judged as TRL 1.16.0 (grpo-config's default release)" in said
    (tmp_path / "requirements.txt").write_text("trl==0.19.1\n")
    said = text_of(capsys, "validate", config)
    assert "valid at world size 1; judged as TRL 0.19.1 (the trl pinned in the repository's requirements)" in said
    config.write_text("# grpo: --trl-version 0.23\n" + OLD)
    said = text_of(capsys, "explain", config)
    assert "judged as TRL 0.23 (the file's `# grpo: --trl-version` comment)" in said


def test_migrate_says_what_it_migrated_from_and_to(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(detect, "installed_version", lambda search_path=None: ("0.19.1", "METADATA"))
    config = tmp_path / "run.yaml"
    config.write_text(OLD)
    said = text_of(capsys, "migrate", config)
    assert (
        "written for TRL 0.19.1 (the trl installed beside this Python); migrated to TRL 1.16 (the default "
        "target)" in said
    ), said
    said = text_of(capsys, "migrate", config, "--from", "0.19", "--to", "0.23")
    assert "written for TRL 0.19 (--from); migrated to TRL 0.23.1 (--to)" in said, said

"""open-r1's script as it was at the TRL pins its recipes use: its GRPOScriptArguments always read reward_funcs
(TRL's own script only from 0.18), its registry judges the names, reward_weights counts the file's reward_funcs,
and the default rewards are those of the era (accuracy and format up to TRL 0.15; tag_count joined at 0.16)."""

from __future__ import annotations

import pytest

from grpo_schema.engine.check import check_mapping

RECIPE = {
    "model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct",
    "dataset_name": "AI-MO/NuminaMath-TIR",
    "output_dir": "out",
    "per_device_train_batch_size": 8,
    "num_generations": 8,
}


def findings(release: str, **keys) -> list[tuple[str, tuple[str, ...]]]:
    result = check_mapping({**RECIPE, **keys}, trl_version=release, profiles=["open-r1"])
    return sorted((d.code, d.fields) for d in result.diagnostics if d.severity in ("error", "warning"))


@pytest.mark.parametrize("release", ["0.14", "0.15", "0.16", "0.17", "0.18", "1.16"])
def test_reward_funcs_is_read_by_open_r1_s_script_at_every_pin(release):
    found = findings(release, reward_funcs=["accuracy", "format"])
    assert not [f for f in found if "reward_funcs" in f[1]], found


@pytest.mark.parametrize("release", ["0.16", "0.17"])
def test_reward_weights_count_the_file_s_reward_funcs(release):
    assert findings(release, reward_funcs=["accuracy", "format"], reward_weights=[1.0, 0.5]) == []
    three = findings(release, reward_funcs=["accuracy", "format"], reward_weights=[1.0, 0.5, 1.0])
    assert [code for code, _ in three] == ["GRPO-R001"]


@pytest.mark.parametrize("release", ["0.15", "0.17"])
def test_names_are_checked_against_open_r1_s_registry(release):
    assert "GRPO-R002" in [code for code, _ in findings(release, reward_funcs=["accuracy", "accuracy_fork"])]


@pytest.mark.parametrize("release, sources", [("0.15", 2), ("0.16", 3), ("1.16", 3)])
def test_default_rewards_are_the_era_s(release, sources):
    weights = [1.0] * sources
    assert not any(code == "GRPO-R001" for code, _ in findings(release, reward_weights=weights))
    assert any(code == "GRPO-R001" for code, _ in findings(release, reward_weights=weights + [1.0]))

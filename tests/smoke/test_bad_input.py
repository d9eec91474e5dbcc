"""Bad input gets a named diagnostic before anything starts (no worker, no traceback of ours), with the exit codes
of interface.md: 1 invalid config, 3 refused."""

import json
from types import SimpleNamespace

import pytest

from .conftest import run_smoke


def test_an_invalid_config_exits_1(workspace):
    code, report = run_smoke(workspace(loss_type="no_such_loss"))
    assert code == 1 and report["exit_code"] == 1 and report["component"] == "config" and not report["passed"]


def test_a_reward_module_that_cannot_be_imported_is_named(workspace):
    code, report = run_smoke(workspace(reward_funcs=["no_such_module.reward"]))
    assert code == 3 and report["component"] == "reward function no_such_module.reward", report
    assert "No module named 'no_such_module'" in report["error"]
    assert report["config_line"]["text"] == "- no_such_module.reward" and "traceback" not in report


def test_a_dataset_path_of_another_machine_is_refused_under_strict_paths(workspace, tmp_path):
    code, report = run_smoke(workspace(dataset_name=str(tmp_path / "missing" / "train.jsonl")), "--strict-paths")
    assert code == 3 and report["component"] == "dataset", report
    assert "does not exist" in report["error"] and report["config_line"]["text"].startswith("dataset_name:")
    assert "traceback" not in report and report["seconds"] < 30  # refused before anything is built


def test_a_model_and_deepspeed_path_of_another_machine_are_refused_under_strict_paths(workspace):
    code, report = run_smoke(workspace(model_name_or_path="/home/alice/models/Qwen2.5-0.5B-Instruct"), "--strict-paths")
    assert code == 3 and report["component"] == "model" and "/home/alice/models" in report["error"], report
    code, report = run_smoke(workspace(deepspeed="/home/alice/ds/zero3.json"), "--strict-paths")
    assert code == 3 and report["component"] == "sharding" and "zero3.json" in report["error"], report
    assert report["config_line"]["text"].startswith("deepspeed:")


def test_an_architecture_transformers_does_not_know_is_named(workspace, tmp_path):
    folder = tmp_path / "strange-model"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "no-such-architecture",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "intermediate_size": 128,
                "vocab_size": 100,
            }
        )
    )
    code, report = run_smoke(workspace(model_name_or_path=str(folder)))
    assert code == 3 and report["component"] == "model", report
    assert "does not know" in report["error"]


def test_more_processes_than_the_machine_runs_is_named_when_no_smaller_world_size_fits():
    from grpo_runtime.smoke.plan import SmokePlan, SmokeRefused
    from grpo_runtime.smoke.settings import choose_world_size

    config = SimpleNamespace(
        num_generations=8,
        generation_batch_size=None,
        eval_strategy="no",
        num_generations_eval=None,
        per_device_train_batch_size=1,
    )
    plan = SmokePlan()
    with pytest.raises(SmokeRefused) as refused:
        choose_world_size("run.yaml", config, plan, 64, lambda size: SimpleNamespace(valid=size == 64))
    assert refused.value.component == "world size" and "64 processes" in str(refused.value)
    assert "per_device_train_batch_size" not in plan.overrides  # the fallback is undone


def test_a_world_size_the_machine_cannot_run_is_substituted_and_stated():
    from grpo_runtime.smoke.plan import SmokePlan
    from grpo_runtime.smoke.settings import choose_world_size

    config = SimpleNamespace(
        num_generations=8,
        generation_batch_size=None,
        eval_strategy="no",
        num_generations_eval=None,
        per_device_train_batch_size=8,
    )
    plan = SmokePlan()
    assert choose_world_size("run.yaml", config, plan, 8, lambda size: SimpleNamespace(valid=True)) == 1
    assert plan.groups[-1].status == "substituted" and "instead of 8" in plan.groups[-1].detail


def test_the_text_report_names_the_failure(workspace, capsys):
    from grpo_runtime.smoke.command import smoke_command

    code = smoke_command([str(workspace(dataset_name="./nowhere/data.jsonl")), "--strict-paths"])
    out = capsys.readouterr().out
    assert code == 3 and "FAILED (dataset)" in out and "configured at" in out and "Traceback" not in out


@pytest.mark.parametrize("bad", ["abc", "0.9"])
def test_a_version_that_cannot_be_judged_is_a_usage_error_before_anything_starts(workspace, capsys, bad):
    from grpo_runtime.smoke.command import smoke_command

    code = smoke_command([str(workspace()), "--trl-version", bad, "--format", "json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""  # no report: nothing ran
    assert "grpo smoke: error: --trl-version:" in captured.err and "supported releases are 0.14.0 to" in captured.err


def test_a_vision_language_model_is_refused_not_smoked_as_a_text_model(workspace, tmp_path):
    code, report = run_smoke(workspace(model_name_or_path="Qwen/Qwen2.5-VL-3B-Instruct"))
    assert code == 3 and report["component"] == "model", report
    assert "is a vision-language model (its name says VL)" in report["error"] and "traceback" not in report
    from transformers import Qwen2VLConfig

    Qwen2VLConfig().save_pretrained(tmp_path / "local-vl")  # on disk: judged by its config, whatever its name
    code, report = run_smoke(workspace(model_name_or_path=str(tmp_path / "local-vl")))
    assert code == 3 and "(its config.json says Qwen2VLForConditionalGeneration)" in report["error"], report

"""`grpo smoke` names the failing component for seeded faults, and passes a config without one."""

import pytest

from .conftest import run_smoke

pytestmark = pytest.mark.slow


def test_a_sound_config_passes_with_every_group_reported(workspace):
    code, report = run_smoke(workspace())
    assert code == 0 and report["passed"], report
    assert report["version"] == 1 and report["exit_code"] == 0 and report["seconds"] > 0
    groups = {g["group"]: g for g in report["groups"]}
    assert groups["model"]["status"] == "exercised"  # the tiny local model runs as it is
    assert groups["dataset"]["status"] == "exercised"
    assert groups["checkpoint save and resume"]["status"] == "exercised"
    assert {g["status"] for g in report["groups"]} <= {"exercised", "substituted", "not_exercised"}


def test_a_reward_raising_on_one_completion_is_named_with_the_completion(workspace):
    code, report = run_smoke(workspace(reward_funcs=["my_rewards.fine", "my_rewards.picky"]))
    assert code == 4 and report["component"] == "reward function picky", report
    assert "on completion" in report["error"] and "cannot score this row" in report["error"]
    assert report["traceback"][0].split(":")[0].endswith("my_rewards.py")  # the user's own frame first
    assert report["config_line"]["text"] == "- my_rewards.picky"
    assert report["exception"] == {"type": "ValueError", "message": "cannot score this row"}
    assert report["phase"] == "first"
    owners = report["frame_owners"]  # the user's frames, then grpo's, then the libraries'
    assert owners[0] == "user" and "ours" in owners
    assert owners == sorted(owners, key=["user", "ours", "library"].index)


def test_a_reward_returning_none_is_named(workspace):
    code, report = run_smoke(workspace(reward_funcs=["my_rewards.nothing"]))
    assert code == 4 and report["component"] == "reward function nothing", report
    assert "returned None" in report["error"]


def test_a_missing_dataset_column_is_named(workspace):
    code, report = run_smoke(workspace(reward_funcs=["my_rewards.needs_answer"]))
    assert code == 4 and report["component"] == "dataset column", report
    assert "'answer'" in report["error"] and report["config_line"]["text"].startswith("dataset_name:")


def test_a_failing_chat_template_is_named(workspace, failing_template_model):
    code, report = run_smoke(workspace(model_name_or_path=str(failing_template_model)))
    assert code == 4 and report["component"] == "chat template", report
    assert "must start with a system message" in report["error"]


def test_a_peft_target_missing_from_the_model_is_named(workspace):
    code, report = run_smoke(workspace(use_peft=True, lora_target_modules=["nonexistent_proj"]))
    assert code == 4 and report["component"] == "PEFT target", report
    assert report["config_line"]["text"].startswith("lora_target_modules:")


def test_a_checkpoint_that_cannot_be_resumed_is_named(workspace):
    code, report = run_smoke(workspace(save_only_model=True))
    assert code == 4 and report["component"] == "checkpoint resume", report
    assert report["phase"] == "resume" and report["config_line"]["text"] == "save_only_model: true"


def test_two_declared_processes_run_as_two_cpu_processes(workspace):
    """Declared as grpo validate takes it (--world-size, which wins over the file's num_processes)."""
    from grpo_runtime.smoke.settings import cpu_process_limit

    if cpu_process_limit() < 2:
        pytest.skip("this machine runs one CPU process")
    from grpo_runtime.smoke.command import smoke_command

    with pytest.raises(SystemExit) as refused:  # usage, as every command refuses it (argparse: exit 2)
        smoke_command([str(workspace()), "--world-size", "0"])
    assert refused.value.code == 2
    code, report = run_smoke(workspace(num_processes=7, per_device_train_batch_size=4), "--world-size", "2")
    assert code == 0 and report["world_size"] == 2, report
    assert {g["group"]: g["status"] for g in report["groups"]}["world size"] == "exercised"


def test_a_dataset_too_small_for_one_generation_is_refused_as_the_runtime_refuses_it(workspace):
    code, report = run_smoke(workspace(per_device_train_batch_size=16))  # 8 distinct prompts, the data has 4
    assert code == 3 and report["component"] == "dataset", report

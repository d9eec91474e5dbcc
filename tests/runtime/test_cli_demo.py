"""`grpo demo`, `grpo train` and their refusals."""

import json

import pytest
import yaml

from grpo_runtime.launch.cli import demo_command, launch_command, train_command
from grpo_runtime.launch.demo import SCHEMA_LINE

from .helpers import read_metrics


def test_train_refuses_an_invalid_config_with_diagnostics(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text(
        "model_name_or_path: x\ndataset_name: d\nreward_funcs: [accuracy_reward]\n"
        "per_device_train_batch_size: 3\nnum_generations: 4\n"
    )
    assert train_command([str(config)]) == 1
    assert launch_command([str(config), "--num-processes", "2"]) == 1
    captured = capsys.readouterr()
    assert "num_generations" in captured.err and "nothing was run" in captured.err
    assert not (tmp_path / "trainer_output").exists()


def test_env_allowances_reach_validation_and_the_launched_processes(tmp_path, capsys, monkeypatch):
    config = tmp_path / "env.yaml"
    config.write_text(
        "model_name_or_path: x\ndataset_name: d\nreward_funcs: [accuracy_reward]\n"
        "per_device_train_batch_size: 3\nnum_generations: 4\n"
        "env:\n  PYTHONPATH: /opt/mine\n"
    )
    assert train_command([str(config)]) == 1
    assert "GRPO-E003" in capsys.readouterr().err
    assert train_command([str(config), "--allow-env", "PYTHONPATH"]) == 1  # still refused: the batch is invalid
    assert "GRPO-E003" not in capsys.readouterr().err
    config.write_text(
        "model_name_or_path: x\ndataset_name: d\nreward_funcs: [accuracy_reward]\n"
        "per_device_train_batch_size: 4\nnum_generations: 4\n"
        "env:\n  PYTHONPATH: /opt/mine\n"
    )
    launched = []
    monkeypatch.setattr("grpo_runtime.launch.cli.subprocess.call", lambda command: launched.append(command) or 0)
    monkeypatch.setenv("PYTHONPATH", "")
    assert launch_command([str(config), "--num-processes", "2", "--allow-env", "PYTHONPATH"]) == 0
    assert launched[0][-2:] == ["--allow-env", "PYTHONPATH"]  # each process re-validates with the same allowance


def test_train_refuses_a_world_size_it_is_not_running_with(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("model_name_or_path: x\n")
    assert train_command([str(config), "--world-size", "4"]) == 2
    assert "grpo launch" in capsys.readouterr().err


def test_unsupported_features_are_refused_before_training(tmp_path, tiny_model_dir):
    from grpo_runtime.support import CannotRun, enforce

    from .helpers import base_settings, validated

    settings = base_settings(tiny_model_dir, tmp_path / "d.jsonl", tmp_path / "out")
    settings.update(use_vllm=True, deepspeed="missing/zero3.json")
    with pytest.raises(CannotRun, match="deepspeed: .*'missing/zero3.json' is not a file(.|\n)*use_vllm"):
        enforce(validated(settings).config)
    settings.update(use_vllm=False, deepspeed=None, torch_compile=True)
    with pytest.warns(UserWarning, match="torch_compile: the model runs eagerly"):
        enforce(validated(settings).config)


@pytest.mark.slow
def test_demo_reward_rises(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert demo_command([str(tmp_path / "demo")]) == 0
    config = tmp_path / "demo" / "config.yaml"
    assert config.read_text().splitlines()[0] == SCHEMA_LINE
    settings = yaml.safe_load(config.read_text())
    assert settings["reward_funcs"] == ["grpo_runtime.data.reward_library.target_word_reward"]
    rows = [json.loads(x) for x in (tmp_path / "demo" / "data" / "train.jsonl").read_text().splitlines()]
    assert {r["target"] for r in rows} == {"cat", "star"}

    assert train_command([str(config), "--set", "disable_tqdm=true"]) == 0

    rewards = [r["reward"] for r in read_metrics(tmp_path / "demo" / "output")]
    assert len(rewards) == settings["max_steps"]
    first, last = sum(rewards[:10]) / 10, sum(rewards[-10:]) / 10
    assert first < 0.4 and last > first + 0.4, (first, last)


def test_an_unreadable_config_is_a_usage_error(tmp_path, capsys):
    assert train_command([str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_grpo_command_dispatches_to_the_runtime(tmp_path):
    from grpo_schema.cli import main as grpo

    assert grpo(["demo", str(tmp_path / "d")]) == 0
    assert (tmp_path / "d" / "model" / "model.safetensors").exists()
    bad = tmp_path / "bad.yaml"
    bad.write_text("per_device_train_batch_size: 3\nnum_generations: 4\n")
    assert grpo(["train", str(bad)]) == 1


def test_launch_fills_in_only_the_accelerate_flags_the_user_left_out():
    from types import SimpleNamespace

    from grpo_runtime.launch.cli import default_launch_args

    fp32 = SimpleNamespace(bf16=False, fp16=False)
    one_machine = default_launch_args([], 2, fp32)
    assert one_machine[:7] == [
        "--num_machines",
        "1",
        "--dynamo_backend",
        "no",
        "--mixed_precision",
        "no",
        "--multi_gpu",
    ]
    # a free port of its own, never accelerate's fixed 29500 that another run on this machine may hold
    assert one_machine[7] == "--main_process_port" and int(one_machine[8]) != 29500 and len(one_machine) == 9
    assert "--main_process_port" not in default_launch_args(["--main_process_port", "29600"], 2, fp32)
    assert "--main_process_port" not in default_launch_args([], 1, fp32)
    multi_node = default_launch_args(["--num_machines", "2", "--use_fsdp"], 8, SimpleNamespace(bf16=None, fp16=False))
    assert multi_node == ["--dynamo_backend", "no", "--mixed_precision", "bf16"]  # bf16 unset means on, as in TRL
    assert default_launch_args(["--config_file", "accelerate.yaml"], 8, fp32) == []

"""`grpo demo`, `grpo train` and their refusals."""

import json

import pytest
import yaml

from grpo_runtime.cli import demo_command, launch_command, train_command
from grpo_runtime.demo import SCHEMA_LINE

from .helpers import read_metrics


def test_train_refuses_an_invalid_config_with_diagnostics(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text("model_name_or_path: x\nper_device_train_batch_size: 3\nnum_generations: 4\n")
    assert train_command([str(config)]) == 1
    assert launch_command([str(config), "--num-processes", "2"]) == 1
    captured = capsys.readouterr()
    assert "num_generations" in captured.err and "nothing was run" in captured.err
    assert not (tmp_path / "trainer_output").exists()


def test_env_allowances_reach_validation_and_the_launched_processes(tmp_path, capsys, monkeypatch):
    config = tmp_path / "env.yaml"
    config.write_text("model_name_or_path: x\nper_device_train_batch_size: 3\nnum_generations: 4\n"
                      "env:\n  PYTHONPATH: /opt/mine\n")
    assert train_command([str(config)]) == 1
    assert "GRPO-E003" in capsys.readouterr().err
    assert train_command([str(config), "--allow-env", "PYTHONPATH"]) == 1  # still refused: the batch is invalid
    assert "GRPO-E003" not in capsys.readouterr().err
    config.write_text("model_name_or_path: x\nper_device_train_batch_size: 4\nnum_generations: 4\n"
                      "env:\n  PYTHONPATH: /opt/mine\n")
    launched = []
    monkeypatch.setattr("grpo_runtime.cli.subprocess.call", lambda command: launched.append(command) or 0)
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
    settings.update(use_vllm=True, push_to_hub=True, hub_model_id="me/model")
    with pytest.raises(CannotRun, match="push_to_hub.*\n.*use_vllm"):
        enforce(validated(settings).config)
    settings.update(use_vllm=False, push_to_hub=False, torch_compile=True)
    with pytest.warns(UserWarning, match="torch_compile: the model runs eagerly"):
        enforce(validated(settings).config)


def test_launch_fills_in_only_the_accelerate_flags_the_user_left_out():
    from types import SimpleNamespace

    from grpo_runtime.cli import default_launch_args

    fp32 = SimpleNamespace(bf16=False, fp16=False)
    assert default_launch_args([], 2, fp32) == ["--num_machines", "1", "--dynamo_backend", "no",
                                                "--mixed_precision", "no", "--multi_gpu"]
    multi_node = default_launch_args(["--num_machines", "2", "--use_fsdp"], 8, SimpleNamespace(bf16=None, fp16=False))
    assert multi_node == ["--dynamo_backend", "no", "--mixed_precision", "bf16"]  # bf16 unset means on, as in TRL
    assert default_launch_args(["--config_file", "accelerate.yaml"], 8, fp32) == []

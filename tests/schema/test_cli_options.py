"""The command line's shared options: one definition, so every command refuses a bad value the same way."""

from __future__ import annotations

import importlib.util

import pytest

from grpo_schema.cli import COMMANDS, main

# Every command that takes --world-size, with the arguments it needs besides.
WORLD_SIZE_COMMANDS = ("validate", "explain", "plan", "export", "train", "smoke")
RUNTIME = {"train", "smoke"}


def _refusal(capsys, command: str, value: str, path) -> tuple[int, str]:
    if command in RUNTIME and importlib.util.find_spec("torch") is None:
        pytest.skip("the runtime extra is not installed")
    with pytest.raises(SystemExit) as exited:  # argparse refuses the value, as for any bad option
        main([command, str(path), "--world-size", value])
    return exited.value.code, capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("value", ["0", "-3"])
@pytest.mark.parametrize("command", WORLD_SIZE_COMMANDS)
def test_every_command_refuses_a_world_size_below_one_as_validate_does(capsys, tmp_path, command, value):
    path = tmp_path / "run.yaml"
    path.write_text("num_generations: 4\nper_device_train_batch_size: 4\n")
    code, line = _refusal(capsys, command, value, path)
    assert code == 2
    assert line == f"grpo {command}: error: argument --world-size: world size must be at least 1, got {value}"


def test_the_table_names_every_command_once():
    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names))
    assert {"validate", "codes", "schema", "plan", "explain", "doctor", "health", "launch", "lsp"} <= set(names)


def test_launch_help_lists_ray_beside_slurm(capsys):
    if importlib.util.find_spec("torch") is None:
        pytest.skip("the runtime extra is not installed")
    with pytest.raises(SystemExit) as exited:
        main(["launch", "--help"])
    out = capsys.readouterr().out
    assert exited.value.code == 0
    assert "--slurm" in out and "--ray ADDRESS" in out and "--emit SCHEDULER" in out


def test_an_unknown_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["nonesuch"])
    assert exited.value.code == 2
    assert "invalid choice: 'nonesuch'" in capsys.readouterr().err


def test_validate_keeps_trl_style_options_apart_from_its_own(capsys, tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("num_generations: 4\nper_device_train_batch_size: 4\n")
    code = main(["validate", str(path), "--format", "json", "--num_generations", "3"])
    out = capsys.readouterr().out
    assert code == 1 and '"GRPO-B' in out  # 4 completions a step are not divisible into groups of 3

"""Sharding settings read from the config alone (grpo_runtime.distributed.accelerate): launcher flags from the file's
`accelerate launch` keys, the FSDP plugin settings, DeepSpeed's "auto" values, and the refusals made before
anything loads."""

import importlib.resources
import json

import pytest
import yaml

from grpo_runtime.distributed import accelerate as distributed
from grpo_runtime.launch.cli import EXIT_CANNOT_RUN, launch_command, train_command

from .helpers import base_settings, validated, write_prompts


def config_of(tmp_path, **fields):
    settings = base_settings(tmp_path / "no-model-here", tmp_path / "d.jsonl", tmp_path / "out")
    settings.update(fields)
    return validated(settings, world_size=2)


def test_bundled_accelerate_configs_mirror_trls():
    """Every name `trl grpo --accelerate_config` accepts exists here, with the same distributed type, ZeRO stage
    and ZeRO-3 init (FSDP1 is run as FSDP2)."""
    trl_configs = importlib.resources.files("trl.accelerate_configs")
    names = sorted(p.name.removesuffix(".yaml") for p in trl_configs.iterdir() if p.name.endswith(".yaml"))
    assert names == list(distributed.BUNDLED)
    for name in names:
        theirs = yaml.safe_load(trl_configs.joinpath(f"{name}.yaml").read_text())
        ours = yaml.safe_load((distributed.BUNDLED_DIR / f"{name}.yaml").read_text())
        assert ours["distributed_type"] == theirs["distributed_type"], name
        for key in ("zero_stage", "zero3_init_flag"):
            assert ours.get("deepspeed_config", {}).get(key) == theirs.get("deepspeed_config", {}).get(key), name
        assert distributed.launch_mode({"accelerate_config": name}) == theirs["distributed_type"]


def test_launch_keys_become_accelerate_flags_and_the_command_line_wins():
    flags = distributed.launcher_flags({"accelerate_config": "zero3"}, [])
    assert flags == ["--config_file", str(distributed.BUNDLED_DIR / "zero3.yaml")]
    assert distributed.launcher_flags({"accelerate_config": "zero3"}, ["--config_file", "mine.yaml"]) == []
    assert distributed.launcher_flags({"use_deepspeed": True, "zero_stage": 2}, []) == [
        "--use_deepspeed",
        "--zero_stage",
        "2",
    ]
    assert distributed.launcher_flags({"zero_stage": 3}, ["--zero_stage", "1"]) == ["--use_deepspeed"]
    assert distributed.launcher_flags({"use_fsdp": True}, []) == ["--use_fsdp", "--fsdp_version", "2"]
    assert distributed.launcher_flags({"num_processes": 2}, []) == []


def test_fsdp_settings_follow_transformers_reading(tmp_path):
    legacy = config_of(tmp_path, fsdp="shard_grad_op auto_wrap").config
    assert distributed.fsdp_plugin_kwargs(legacy)["reshard_after_forward"] is False
    path = tmp_path / "fsdp.json"
    path.write_text(
        json.dumps(
            {
                "fsdp_transformer_layer_cls_to_wrap": "Qwen2DecoderLayer",
                "fsdp_reshard_after_forward": "false",
                "fsdp_version": 1,
            }
        )
    )
    config = config_of(tmp_path, fsdp=True, fsdp_config=str(path)).config
    kwargs = distributed.fsdp_plugin_kwargs(config)
    assert kwargs["fsdp_version"] == 2 and kwargs["reshard_after_forward"] is False
    assert kwargs["transformer_cls_names_to_wrap"] == ["Qwen2DecoderLayer"]
    assert any("FSDP1" in w for w in distributed.sharding_warnings(config, {}, 2))


def test_deepspeed_autos_are_filled_from_the_run_and_a_contradiction_is_an_error(tmp_path):
    result = config_of(
        tmp_path,
        gradient_accumulation_steps=2,
        max_grad_norm=0.5,
        deepspeed={
            "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": "auto",
            "bf16": {"enabled": "auto"},
            "zero_optimization": {"stage": 3},
        },
    )
    filled = distributed.deepspeed_config(result.config, result.plan, 2)
    assert filled["train_micro_batch_size_per_gpu"] == 4 and filled["gradient_accumulation_steps"] == 2
    assert filled["train_batch_size"] == 16 and filled["gradient_clipping"] == 0.5
    assert filled["bf16"] == {"enabled": False}  # the run config says bf16: false
    assert distributed.zero_stage(result.config) == 3
    wrong = config_of(tmp_path, deepspeed={"train_micro_batch_size_per_gpu": 8})
    with pytest.raises(ValueError, match="train_micro_batch_size_per_gpu is 8 but this run's is 4"):
        distributed.deepspeed_config(wrong.config, wrong.plan, 2)


def test_refusals_name_the_problem(tmp_path):
    missing = config_of(tmp_path, deepspeed=str(tmp_path / "zero3.json")).config
    assert "is not a file" in distributed.refusals(missing)[0]
    own_optimizer = config_of(tmp_path, deepspeed={"optimizer": {"type": "AdamW"}}).config
    assert "defines its own optimizer" in distributed.refusals(own_optimizer)[0]
    contradicting = config_of(tmp_path, deepspeed={"gradient_accumulation_steps": 4}).config
    assert "gradient_accumulation_steps is 4 but the run's" in distributed.refusals(contradicting)[0]
    plain = config_of(tmp_path).config
    assert distributed.refusals(plain, {"accelerate_config": "zero4"})[0].startswith("accelerate_config: 'zero4'")
    assert distributed.refusals(plain, {"accelerate_config": "zero3"}) == []


def test_a_missing_deepspeed_file_is_refused_before_the_model_loads(tmp_path, capsys, monkeypatch):
    """The model path does not exist: reaching the loader would fail differently. `grpo launch` refuses in the
    launcher, before starting any process."""
    settings = base_settings(tmp_path / "no-model-here", write_prompts(tmp_path / "d.jsonl"), tmp_path / "out")
    settings.update(deepspeed="configs/zero3.json")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(settings))
    assert train_command([str(config)]) == EXIT_CANNOT_RUN
    err = capsys.readouterr().err
    assert "deepspeed: 'configs/zero3.json' is not a file" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    monkeypatch.setattr("grpo_runtime.launch.cli.subprocess.call", lambda command: pytest.fail("a process was started"))
    assert launch_command([str(config), "--num-processes", "2"]) == EXIT_CANNOT_RUN
    assert "configs/zero3.json" in capsys.readouterr().err


def test_launch_passes_the_files_launch_keys_to_accelerate(tmp_path, monkeypatch):
    settings = base_settings(tmp_path / "m", tmp_path / "d.jsonl", tmp_path / "out")
    settings.update(accelerate_config="fsdp2", num_processes=2)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(settings))
    launched = []
    monkeypatch.setattr("grpo_runtime.launch.cli.subprocess.call", lambda command: launched.append(command) or 0)
    assert launch_command([str(config)]) == 0  # num_processes from the file
    command = launched[0]
    assert command[command.index("--num_processes") + 1] == "2"
    assert command[command.index("--config_file") + 1].endswith("accelerate_configs/fsdp2.yaml")
    assert command[command.index("--mixed_precision") + 1] == "no" and "--multi_gpu" not in command


@pytest.mark.parametrize(
    "launch_keys, flags, cpu_adam",
    [
        ({"accelerate_config": "zero3"}, [], False),  # the bundled ZeRO-3 keeps the optimizer on the device
        ({"accelerate_config": "zero3"}, ["--offload_optimizer_device", "cpu"], True),
        ({"deepspeed": {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}}, [], True),
        ({"deepspeed": {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "none"}}}}, [], False),
        ({"deepspeed": "offload.json"}, [], True),
        ({"accelerate_config": "offload-accelerate.yaml"}, [], True),
        ({"use_deepspeed": True}, ["--deepspeed_config_file=offload.json"], True),
    ],
)
def test_the_launcher_builds_cpu_adam_once_when_the_optimizer_is_offloaded(
    tmp_path, monkeypatch, launch_keys, flags, cpu_adam
):
    """DeepSpeed compiles its CPU Adam in every process of an optimizer-offloading run; two compiling at once can
    wreck the build, so `grpo launch` builds it first, and only when the run offloads (it takes minutes)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "offload.json").write_text(
        json.dumps({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}})
    )
    (tmp_path / "offload-accelerate.yaml").write_text(
        yaml.safe_dump(
            {
                "distributed_type": "DEEPSPEED",
                "deepspeed_config": {"zero_stage": 3, "offload_optimizer_device": "nvme"},
                "num_processes": 2,
            }
        )
    )
    settings = base_settings(tmp_path / "m", tmp_path / "d.jsonl", tmp_path / "out")
    settings.update(num_processes=2, **launch_keys)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(settings))
    built = []
    monkeypatch.setattr(distributed, "prebuild_deepspeed_ops", lambda cpu_adam=False: built.append(cpu_adam))
    monkeypatch.setattr("grpo_runtime.launch.cli.subprocess.call", lambda command: 0)
    assert launch_command([str(config), *flags]) == 0
    assert built == [cpu_adam]

"""`grpo plan` takes --set KEY=VALUE and TRL-style `--key value` as grpo validate does, keeps a GPU of its own for
a vLLM server, and offers only what the declared strategy can do."""

from __future__ import annotations

import json

from grpo_schema.cli import main

SERVER = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: d\nreward_funcs: [accuracy_reward]\nuse_vllm: true\n"
    "vllm_mode: server\nper_device_train_batch_size: 4\nnum_generations: 8\n"
)


def plan(tmp_path, capsys, *args, text=SERVER):
    path = tmp_path / "run.yaml"
    path.write_text(text)
    main(["plan", str(path), "--hardware", "2xH100-80GB", "--format", "json", *args])
    return json.loads(capsys.readouterr().out)["files"][0]


def codes(document):
    return [d["code"] for d in document["diagnostics"]]


def test_set_and_trl_flags_override_the_file(tmp_path, capsys):
    assert plan(tmp_path, capsys)["world_size"] == 1  # one GPU kept for the server
    for flags in (["--set", "vllm_mode=colocate"], ["--vllm_mode", "colocate"], ["--vllm_mode=colocate"]):
        document = plan(tmp_path, capsys, *flags)
        assert document["world_size"] == 2, flags
    assert plan(tmp_path, capsys, "--set", "num_generations=4")["derived"]["num_generations"] == 4


def test_server_mode_vllm_needs_a_gpu_of_its_own(tmp_path, capsys):
    assert "GRPO-H012" in codes(plan(tmp_path, capsys, "--world-size", "2"))
    assert "GRPO-H012" not in codes(plan(tmp_path, capsys, "--world-size", "1"))
    assert "GRPO-H012" not in codes(plan(tmp_path, capsys, "--world-size", "2", "--vllm_mode", "colocate"))


def test_no_optimizer_offload_hint_under_plain_ddp(tmp_path, capsys):
    big = SERVER.replace("Qwen2.5-0.5B", "Qwen2.5-72B").replace("use_vllm: true\nvllm_mode: server\n", "")
    ddp = plan(tmp_path, capsys, "--strategy", "ddp", text=big)
    hints = [d["hint"] for d in ddp["diagnostics"] if d["code"] == "GRPO-H001"]
    assert hints and all("offload" not in h.split("shard the states")[0] for h in hints)
    zero3 = plan(tmp_path, capsys, "--strategy", "zero3", text=big)
    assert any("offload" in d["hint"] for d in zero3["diagnostics"] if d["code"] == "GRPO-H001")

"""`grpo plan` on a verl file: planned through the conversion to TRL, said so; refused with the reason where the
conversion or the memory model does not hold (in process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpo_schema.cli import main
from tests.support.verl_runs import RUN


def test_plan_sizes_a_verl_run_as_its_trl_equivalent(tmp_path: Path, capsys) -> None:
    path = tmp_path / "run.sh"
    path.write_text(RUN)
    code = main(["plan", str(path), "--hardware", "8xH100-80GB", "--prompt-length", "512"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "is a verl run: planned as its TRL equivalent" in out and "gpu_memory_utilization 0.4" in out
    assert "LoRA rank 32" in out and "CPU offload optimizer" in out
    assert "world size 8" in out and "Qwen2.5-3B" in out and "per GPU:" in out
    assert "distributed strategy fsdp" in out  # verl's FSDP, not TRL's data-parallel default


@pytest.mark.parametrize(
    "added, reason",
    [
        ("actor_rollout_ref.actor.use_dynamic_bsz=True", "use_dynamic_bsz packs micro-batches by tokens"),
        ("actor_rollout_ref.actor.strategy=megatron", "actor.strategy megatron: the memory model knows"),
    ],
)
def test_plan_refuses_what_the_conversion_or_the_memory_model_does_not_cover(
    tmp_path: Path, capsys, added: str, reason: str
) -> None:
    path = tmp_path / "run.sh"
    path.write_text(RUN.replace("trainer.n_gpus_per_node=8", f"{added} trainer.n_gpus_per_node=8"))
    assert main(["plan", str(path), "--hardware", "8xH100-80GB"]) == 2
    captured = capsys.readouterr()
    assert f"{path}: not planned: {reason}" in captured.err and "per GPU:" not in captured.out


def test_plan_refuses_world_size_for_a_verl_run(tmp_path: Path, capsys) -> None:
    path = tmp_path / "run.sh"
    path.write_text(RUN)
    assert main(["plan", str(path), "--hardware", "8xH100-80GB", "--world-size", "4"]) == 2
    assert "--world-size, --set and --profile are not read for verl files" in capsys.readouterr().err


def test_plan_json_carries_the_verl_notes(tmp_path: Path, capsys) -> None:
    path = tmp_path / "run.sh"
    path.write_text(RUN)
    assert main(["plan", str(path), "--hardware", "8xH100-80GB", "--prompt-length", "512", "--format", "json"]) == 0
    (document,) = json.loads(capsys.readouterr().out)["files"]
    assert "planned as its TRL equivalent" in document["verl_notes"][0] and document["world_size"] == 8

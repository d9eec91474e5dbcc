"""The verl dialect through the `grpo` CLI, in process: validate (formats and exit codes), explain, convert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpo_schema.cli import main
from grpo_schema.engine.validate import check_text

# verl#1524's official example: P=1024, n=5, mini 256, micro 80 on 8 GPUs ("why does micro 80 not divide mini 256?")
ISSUE_1524 = """\
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo data.train_batch_size=1024 actor_rollout_ref.rollout.n=5 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=256 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=80 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=160 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=160 actor_rollout_ref.actor.use_kl_loss=True \\
    trainer.n_gpus_per_node=8 trainer.nnodes=1
"""
# verl#2333: three nodes of one GPU, four prompts, n=3 ("what is the actual batch size, when does gradient
# accumulation happen?")
ISSUE_2333 = """\
python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo data.train_batch_size=6 \\
    actor_rollout_ref.rollout.n=3 actor_rollout_ref.actor.ppo_mini_batch_size=2 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 \\
    actor_rollout_ref.rollout.tensor_model_parallel_size=1 \\
    trainer.n_gpus_per_node=1 trainer.nnodes=3 trainer.total_training_steps=100
"""
TRL = """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
num_processes: 4
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
steps_per_generation: 8
num_generations: 8
num_iterations: 2
max_steps: 400
warmup_steps: 40
learning_rate: 1.0e-6
beta: 0.0
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_validate_text_and_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _write(tmp_path, "run.sh", ISSUE_1524.replace("rollout.n=5", "rollout.n=1"))
    assert main(["validate", bad]) == 1
    out = capsys.readouterr().out
    assert "error[GRPO-Q050]" in out and "judged as verl 0.9.1" in out
    assert main(["validate", _write(tmp_path, "ok.sh", ISSUE_1524)]) == 0


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_validate_machine_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    path = _write(tmp_path, "run.sh", ISSUE_1524.replace("micro_batch_size_per_gpu=80", "micro_batch_size_per_gpu=64"))
    assert main(["validate", "--format", fmt, path]) == 1
    out = capsys.readouterr().out
    if fmt == "json":
        (found,) = [d for d in json.loads(out)["files"][0]["diagnostics"] if d["code"] == "GRPO-Q031"]
        assert (found["line"], found["column"]) == (3, 53)
        assert "160 samples per optimizer step, not a multiple of ppo_micro_batch_size_per_gpu (64)" in found["message"]
    elif fmt == "sarif":
        assert "GRPO-Q031" in {r["ruleId"] for r in json.loads(out)["runs"][0]["results"]}
    else:
        assert "::error file=" in out and "GRPO-Q031" in out


def test_dialect_flag_reads_an_unrecognised_file_as_verl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "notes.txt", "echo nothing here\n")
    assert main(["validate", "--dialect", "verl", path]) == 1
    assert "GRPO-Q001" in capsys.readouterr().out


def test_explain_answers_verl_1524(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", _write(tmp_path, "run.sh", ISSUE_1524)]) == 0
    out = capsys.readouterr().out
    assert "prompts               1024  (data.train_batch_size: prompts, not samples)" in out
    assert "256 prompts x rollout.n 5 = 1280 completions" in out
    assert "over 8 data-parallel ranks (8 GPUs): 160 completions per GPU" in out
    assert "micro-steps per GPU   2 = 160 / ppo_micro_batch_size_per_gpu 80" in out


def test_explain_answers_verl_2333(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--format", "json", _write(tmp_path, "run.sh", ISSUE_2333)]) == 0
    (run,) = json.loads(capsys.readouterr().out)
    s = run["schedule"]
    assert (s["samples_per_rl_step"], s["samples_per_optimizer_step"], s["data_parallel"]) == (18, 6, 3)
    assert (s["samples_per_rank_per_optimizer_step"], s["micro_steps_per_optimizer_step"]) == (2, 2)
    assert s["optimizer_steps_per_rl_step"] == 3 and s["optimizer_steps_total"] == 300
    assert s["trl"] == {
        "num_generations": 3,
        "generation_batch_size": 18,
        "num_iterations": 1,
        "world_size": 3,
        "per_device_train_batch_size": 1,
        "gradient_accumulation_steps": 2,
        "steps_per_generation": 6,
        "max_steps": 300,
    }


def _schedule(text: str) -> dict[str, int]:
    plan = check_text(text.encode(), path="c.yaml").plan
    assert plan is not None
    d = plan.to_dict()
    return {
        k: d[k]
        for k in (
            "generation_batch_size",
            "steps_per_generation",
            "gradient_accumulation_steps",
            "num_generations",
            "per_device_train_batch_size",
            "world_size",
        )
    }


def test_trl_to_verl_and_back_keeps_the_schedule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", _write(tmp_path, "trl.yaml", TRL), "--to", "verl"]) == 0
    script = capsys.readouterr().out
    for override in (
        "data.train_batch_size=16",
        "actor_rollout_ref.rollout.n=8",
        "actor_rollout_ref.actor.ppo_mini_batch_size=8",
        "actor_rollout_ref.actor.ppo_epochs=2",
        "trainer.total_training_steps=100",
        "actor_rollout_ref.actor.optim.lr_warmup_steps=10",
    ):
        assert override in script
    assert "# lossy: reward_funcs ['accuracy_reward']" in script
    verl_path = _write(tmp_path, "run.sh", script)
    assert main(["validate", verl_path]) == 0
    capsys.readouterr()
    assert main(["convert", verl_path, "--to", "trl"]) == 0
    back = capsys.readouterr().out
    assert "max_steps: 400" in back and "warmup_steps: 40" in back
    assert _schedule(back + "dataset_name: d\nreward_funcs: [accuracy_reward]\n") == _schedule(TRL)


def test_convert_refuses_a_step_of_partial_groups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = TRL.replace("num_processes: 4", "num_processes: 1").replace(
        "per_device_train_batch_size: 4", "per_device_train_batch_size: 2"
    )
    text = text.replace("gradient_accumulation_steps: 4", "gradient_accumulation_steps: 1")
    assert main(["convert", _write(tmp_path, "trl.yaml", text), "--to", "verl"]) == 1
    err = capsys.readouterr().err
    assert "2 x 1 x 1 = 2 completions, not whole groups of num_generations 8" in err


def test_convert_refuses_dynamic_batches_to_trl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ISSUE_1524 + "    actor_rollout_ref.actor.use_dynamic_bsz=True\n"
    path = _write(tmp_path, "run.sh", text.replace("trainer.nnodes=1\n", "trainer.nnodes=1 \\\n"))
    assert main(["convert", path, "--to", "trl"]) == 1
    assert "use_dynamic_bsz packs micro-batches by tokens" in capsys.readouterr().err


def test_options_without_meaning_for_verl_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "run.sh", ISSUE_1524)
    assert main(["validate", "--world-size", "4", path]) == 2
    assert "--world-size is not read for verl files" in capsys.readouterr().err

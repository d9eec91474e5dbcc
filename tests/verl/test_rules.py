"""Every verl rule fires on a bad override set, not on its fixed one, at a line of the script; fixes and GPU counts."""

from __future__ import annotations

import pytest

from grpo_schema.dialects.verl.check import check_verl_text
from grpo_schema.dialects.verl.rules import load_verl_rules
from grpo_schema.engine.codes import CODES

A = "actor_rollout_ref.actor."
R = "actor_rollout_ref.rollout."
BASE = [
    "algorithm.adv_estimator=grpo",
    "data.train_batch_size=64",
    R + "n=8",
    A + "ppo_mini_batch_size=16",
    A + "ppo_micro_batch_size_per_gpu=4",
    R + "log_prob_micro_batch_size_per_gpu=8",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8",
    A + "use_kl_loss=True",
    "trainer.n_gpus_per_node=8",
    "trainer.nnodes=1",
]
MEGATRON = ["--config-name", "ppo_megatron_trainer", A + "megatron.tensor_model_parallel_size=2"]

# code -> (overrides added to BASE that break it, overrides added that fix it)
CASES: dict[str, tuple[list[str], list[str]]] = {
    "GRPO-Q010": (MEGATRON + ["trainer.n_gpus_per_node=3"], MEGATRON + ["trainer.n_gpus_per_node=4"]),
    "GRPO-Q011": (["data.train_batch_size=63", R + "n=1"], ["data.train_batch_size=64", R + "n=1"]),
    "GRPO-Q012": ([A + "ppo_micro_batch_size=32"], []),
    "GRPO-Q013": ([A + "loss_agg_mode=sum"], [A + "loss_agg_mode=token-mean"]),
    "GRPO-Q014": ([A + "ppo_mini_batch_size=128"], [A + "ppo_mini_batch_size=64"]),
    "GRPO-Q015": (
        [A + "ppo_micro_batch_size_per_gpu=null", A + "ppo_micro_batch_size=6"],
        [A + "ppo_micro_batch_size_per_gpu=null", A + "ppo_micro_batch_size=8"],
    ),
    "GRPO-Q016": (
        [A + "ulysses_sequence_parallel_size=2", "actor_rollout_ref.model.use_remove_padding=False"],
        [A + "ulysses_sequence_parallel_size=2", "actor_rollout_ref.model.use_remove_padding=True"],
    ),
    "GRPO-Q017": ([R + "log_prob_micro_batch_size=64"], []),
    "GRPO-Q018": (
        [R + "val_kwargs.do_sample=True", R + "temperature=0"],
        [R + "val_kwargs.do_sample=True", R + "temperature=0.6"],
    ),
    "GRPO-Q019": (
        ["algorithm.adv_estimator=gae"],
        ["algorithm.adv_estimator=gae", "critic.ppo_micro_batch_size_per_gpu=4"],
    ),
    "GRPO-Q020": (
        ["actor_rollout_ref.model.lora_rank=1024", R + "name=vllm"],
        ["actor_rollout_ref.model.lora_rank=1024", R + "name=sglang"],
    ),
    "GRPO-Q025": (["actor_rollout_ref.model.lora_rank=32"], ["actor_rollout_ref.model.lora_rank=32", R + "name=vllm"]),
    "GRPO-Q030": (["trainer.n_gpus_per_node=6"], ["trainer.n_gpus_per_node=4"]),
    "GRPO-Q031": ([A + "ppo_micro_batch_size_per_gpu=5"], [A + "ppo_micro_batch_size_per_gpu=8"]),
    "GRPO-Q032": (
        ["trainer.n_gpus_per_node=1", R + "n=8", "data.train_batch_size=16"],
        ["trainer.n_gpus_per_node=1", R + "tensor_model_parallel_size=1"],
    ),
    "GRPO-Q033": (
        [A + "use_dynamic_bsz=True", "data.train_batch_size=33", R + "n=1", A + "ppo_mini_batch_size=8"],
        [A + "use_dynamic_bsz=True", "data.train_batch_size=32", R + "n=1", A + "ppo_mini_batch_size=8"],
    ),
    "GRPO-Q034": ([R + "log_prob_use_dynamic_bsz=True"], [A + "use_dynamic_bsz=True"]),
    "GRPO-Q035": ([A + "ppo_micro_batch_size_per_gpu=null", A + "ppo_micro_batch_size=16"], []),
    "GRPO-Q036": (
        ["trainer.v1.trainer_mode=separate_async", "trainer.v1.separate_async.parameter_sync_step=2"],
        ["trainer.v1.trainer_mode=separate_async", "trainer.v1.separate_async.parameter_sync_step=4"],
    ),
    "GRPO-Q037": (
        ["algorithm.filter_groups.enable=True", "algorithm.filter_groups.metric=null"],
        ["algorithm.filter_groups.enable=True", "algorithm.filter_groups.metric=acc"],
    ),
    # with task rewards a distillation run still trains on the group-relative advantage
    "GRPO-Q050": ([R + "n=1", "distillation.enabled=True"], [R + "n=2"]),
    "GRPO-Q053": (
        [A + "use_dynamic_bsz=True", A + "ppo_mini_batch_size=512"],
        [A + "use_dynamic_bsz=True", A + "ppo_mini_batch_size=64"],
    ),
    "GRPO-Q051": (
        ["trainer.total_training_steps=100"],
        ["trainer.total_training_steps=100", A + "ppo_mini_batch_size=64"],
    ),
    "GRPO-Q052": (
        [A + "use_dynamic_bsz=True", A + "ppo_max_token_len_per_gpu=1000"],
        [A + "use_dynamic_bsz=True", A + "ppo_max_token_len_per_gpu=4096"],
    ),
}


def _script(extra: list[str]) -> str:
    words = ["python3 -m verl.trainer.main_ppo", *BASE, *extra]
    return " \\\n  ".join(words) + "\n"


def _found(extra: list[str], code: str) -> list:
    return [d for d in check_verl_text(_script(extra), "run.sh").diagnostics if d.code == code]


def test_every_verl_rule_has_a_case() -> None:
    assert {r.code for r in load_verl_rules()} == set(CASES)


def test_distillation_from_the_teacher_alone_needs_no_groups() -> None:
    """verl's on-policy distillation recipes sample once per prompt and train on the teacher's signal only."""
    teacher_only = [R + "n=1", "distillation.enabled=True", "distillation.distillation_loss.use_task_rewards=False"]
    assert _found(teacher_only, "GRPO-Q050") == []
    assert _found([R + "n=1", "distillation.distillation_loss.use_task_rewards=False"], "GRPO-Q050")


def test_the_base_set_is_clean() -> None:
    assert [d.code for d in check_verl_text(_script([]), "run.sh").diagnostics] == []


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_fires_on_bad_and_not_on_fixed(code: str) -> None:
    bad, good = CASES[code]
    fired = _found(bad, code)
    assert fired, check_verl_text(_script(bad), "run.sh").diagnostics
    assert fired[0].severity == CODES[code].severity and fired[0].line is not None and fired[0].fields
    assert not _found(good, code)


def test_cluster_findings_give_the_gpu_counts_and_smallest_edits() -> None:
    (d,) = _found(["trainer.n_gpus_per_node=6"], "GRPO-Q030")
    assert "not a multiple of the 6 data-parallel ranks" in d.message
    assert d.hint.startswith("holds at 1, 2, 4, 8, 16, 32, 64, 128 GPUs")
    assert d.fix is not None and d.fix.set == {A + "ppo_mini_batch_size": 18}
    assert {"trainer.n_gpus_per_node": 4} in [f.set for f in d.alternatives]


def test_old_meaning_of_mini_is_named() -> None:
    (d,) = _found([A + "ppo_mini_batch_size=512"], "GRPO-Q014")
    assert "512 samples are 64 prompts at rollout.n=8" in d.hint and d.fix.set == {A + "ppo_mini_batch_size": 64}


def test_one_gpu_with_the_default_rollout_tp() -> None:
    (d,) = _found(["trainer.n_gpus_per_node=1", "data.train_batch_size=16"], "GRPO-Q032")
    assert "verl's default 2: it is not set" in d.message
    assert d.fix.set == {R + "tensor_model_parallel_size": 1}

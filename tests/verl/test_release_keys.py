"""Keys as verl's release composes them, in patterns taken from real launch scripts: the model engine a run picks
(its own keys), config-class fields verl's YAML leaves out (added with +), and values Hydra's grammar refuses."""

from __future__ import annotations

import pytest

from grpo_schema.dialects.verl.check import check_verl_text
from grpo_schema.dialects.verl.hydra_grammar import value_problem
from tests.support.verl_runs import LAUNCH_HEAD

A = "actor_rollout_ref.actor."
HEAD = "#!/bin/bash\nset -x\nENGINE=${ENGINE:-veomni}\n" + LAUNCH_HEAD


def _diagnostics(tail: str) -> list:
    return [d for d in check_verl_text(HEAD + tail + "\n", "run.sh").diagnostics if d.severity != "info"]


def test_keys_of_the_model_engine_the_run_picks_are_known() -> None:
    tail = (
        "    model_engine=$ENGINE \\\n    actor_rollout_ref.actor.veomni.param_offload=True \\\n"
        "    actor_rollout_ref.actor.veomni.fsdp_size=8 \\\n    actor_rollout_ref.ref.veomni.param_offload=True"
    )
    assert _diagnostics(tail) == []
    torchtitan = "    model_engine=torchtitan actor_rollout_ref.actor.torchtitan.tensor_parallel_size=2"
    assert _diagnostics(torchtitan) == []
    # the same keys under the default engine (dp) are not verl's
    assert {d.code for d in _diagnostics("    actor_rollout_ref.actor.veomni.fsdp_size=8")} == {"GRPO-Q004"}


def test_a_model_engine_the_release_lacks_is_named_with_its_choices() -> None:
    found = _diagnostics("    model_engine=mindspeed")
    assert [d.code for d in found] == ["GRPO-Q024"]
    assert "dp, megatron, torchtitan, veomni" in found[0].message and (found[0].line, found[0].column) == (14, 5)


def test_config_class_fields_left_out_of_the_yaml_are_added_with_plus() -> None:
    added = (
        "    +actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype=bf16 \\\n"
        "    +actor_rollout_ref.actor.fsdp_config.mixed_precision.reduce_dtype=fp32"
    )
    assert _diagnostics(added) == []
    (refused,) = _diagnostics("    actor_rollout_ref.actor.fsdp_config.mixed_precision=null")
    assert refused.code == "GRPO-Q004" and "+actor_rollout_ref.actor.fsdp_config.mixed_precision" in refused.hint


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ("actor_rollout_ref.model.path=<path_to_model>", "'<'"),
        ("trainer.experiment_name=qwen3_4b}", "closes no bracket"),
        ("trainer.logger=console,wandb", "sweep"),
        ("'trainer.project_name=a=b'", "second `=`"),
        ("'trainer.experiment_name=run(1)'", "function syntax"),
    ],
)
def test_values_hydras_grammar_refuses(written: str, why: str) -> None:
    (found,) = _diagnostics("    " + written)
    assert found.code == "GRPO-Q023" and why in found.message and found.line == 14


def test_values_hydras_grammar_reads() -> None:
    tail = (
        '    trainer.logger=\'["console","wandb"]\' \\\n    trainer.experiment_name="\'a,b (c)\'" \\\n'
        "    data.train_files=$HOME/data/train.parquet \\\n    +trainer.note='${oc.env:USER}'"
    )
    assert [d.code for d in _diagnostics(tail)] == ["GRPO-Q006"]  # the added note: not a problem of grammar
    for text in ("[a, 'b c']", "{a:1,b:[2,3]}", "x@y|z%*?:w", "int(3)", "'a=b'", "a\\,b"):
        assert value_problem(text) is None, text


def test_verls_fully_async_trainer_is_read_with_its_own_config() -> None:
    text = """\
python -m verl.experimental.fully_async_policy.fully_async_main \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=0 \\
    actor_rollout_ref.rollout.n=8 \\
    actor_rollout_ref.rollout.name=vllm \\
    actor_rollout_ref.actor.ppo_mini_batch_size=32 \\
    actor_rollout_ref.actor.use_dynamic_bsz=True \\
    async_training.require_batches=4 \\
    async_training.staleness_threshold=0.5 \\
    rollout.nnodes=1 rollout.n_gpus_per_node=4 \\
    trainer.n_gpus_per_node=4 trainer.nnodes=1
"""
    found = check_verl_text(text, "async.sh").diagnostics
    assert [d.code for d in found if d.severity != "info"] == []  # its keys known; train_batch_size 0 is its way
    assert any("fully async trainer" in d.message for d in found if d.code == "GRPO-Q008")


def test_ray_init_arguments_are_passed_on_not_warned() -> None:
    added = (
        "    +ray_kwargs.ray_init.include_dashboard=False \\\n    +ray_kwargs.ray_init.object_store_memory=1073741824"
    )
    assert _diagnostics(added) == []
    assert [d.code for d in _diagnostics("    +ray_kwargs.my_note=1")] == ["GRPO-Q006"]


def test_keys_added_to_the_reward_section_are_read_as_given() -> None:
    added = "    +reward.reward_kwargs.overlong_buffer_cfg.enable=True \\\n    +reward.reward_kwargs.max_resp_len=4096"
    assert _diagnostics(added) == []  # added, and read by verl's reward loop: not refused
    assert [d.code for d in _diagnostics("    +actor_rollout_ref.rollout.tree_depth=4")] == ["GRPO-Q022"]

"""Reading verl launch scripts and YAML: positions, variables, several runs, and bad input as diagnostics."""

from __future__ import annotations

import pytest

from grpo_schema.dialects.verl.check import check_verl_text, looks_like_verl
from grpo_schema.dialects.verl.launch import runs_in_script

A = "actor_rollout_ref.actor."
GOOD = """\
#!/usr/bin/env bash
NNODES=${NNODES:-2}
MINI=64
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=128 \\
    actor_rollout_ref.rollout.n=8 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=$MINI \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 \\
    trainer.n_gpus_per_node=8 trainer.nnodes=$NNODES \\
    trainer.logger='["console","wandb"]' +data.my_note=hello
"""


def _codes(text: str) -> list[str]:
    return [d.code for d in check_verl_text(text, "run.sh").diagnostics]


def test_overrides_keep_line_column_and_variables() -> None:
    runs, _ = runs_in_script(GOOD)
    (run,) = runs
    mini = run.last(A + "ppo_mini_batch_size")
    assert (mini.line, mini.column, mini.value) == (8, 5, 64)
    nodes = run.last("trainer.nnodes")
    assert (nodes.line, nodes.column, nodes.value) == (12, 31, 2)
    assert "NNODES is not set in the script, so its default '2' is taken" in nodes.notes[0]
    assert run.last("trainer.logger").text == '["console","wandb"]'
    assert run.last("data.my_note").op == "+"


def test_a_valid_script_is_valid_at_its_declared_gpus() -> None:
    result = check_verl_text(GOOD, "run.sh")
    assert result.valid and result.world_size == 16
    assert {d.code for d in result.diagnostics} == {"GRPO-Q008", "GRPO-Q006"}  # default taken; +data.my_note


def test_an_unset_variable_is_unknown_and_its_rules_skipped() -> None:
    text = GOOD.replace("ppo_mini_batch_size=$MINI", "ppo_mini_batch_size=$FROM_ENV")
    result = check_verl_text(text, "run.sh")
    (note,) = [d for d in result.diagnostics if d.code == "GRPO-Q002"]
    assert note.line == 8 and "FROM_ENV is not set in the script" in note.message
    assert result.valid


def test_command_substitution_loop_and_function_leave_values_unknown() -> None:
    text = (
        "N=$(nproc)\nfor i in 1 2; do\n  P=$i\ndone\npython3 -m verl.trainer.main_ppo data.train_batch_size=$P "
        "actor_rollout_ref.rollout.n=$N\n"
    )
    result = check_verl_text(text, "run.sh")
    unknown = {d.fields[0]: d.message for d in result.diagnostics if d.code == "GRPO-Q002"}
    assert "assigned only inside a `for` at line 2" in unknown["data.train_batch_size"]
    assert "the command substitution $(nproc) is not run" in unknown["actor_rollout_ref.rollout.n"]


def test_several_runs_are_told_apart() -> None:
    text = (
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.n=1 algorithm.adv_estimator=grpo\n"
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.n=4 algorithm.adv_estimator=grpo\n"
    )
    found = [d for d in check_verl_text(text, "run.sh").diagnostics if d.code == "GRPO-Q050"]
    assert len(found) == 1 and found[0].message.startswith("run 1 (line 1):") and found[0].line == 1


def test_config_name_and_path_are_read() -> None:
    runs, _ = runs_in_script(
        "python3 -m verl.trainer.main_ppo --config-path=conf --config-name ppo_megatron_trainer trainer.nnodes=1\n"
    )
    assert (runs[0].config_name, runs[0].config_path) == ("ppo_megatron_trainer", "conf")


@pytest.mark.parametrize(
    "text, code, line",
    [
        ("echo hello\nls -l\n", "GRPO-Q001", 1),
        ("python3 -m verl.trainer.main_ppo data.train_batch_size='12\n", "GRPO-Q009", 1),
        ("python3 -m verl.trainer.main_ppo \\\n  trainer.logger=[console\n", "GRPO-Q023", 2),
        ("python3 -m verl.trainer.main_ppo \\\n  justaword\n", "GRPO-Q023", 2),
        ("python3 -m verl.trainer.main_ppo \\\n  data.train_batch_sise=8\n", "GRPO-Q004", 2),
        ("python3 -m verl.trainer.main_ppo \\\n  +data.train_batch_size=8\n", "GRPO-Q005", 2),
        ("python3 -m verl.trainer.main_ppo \\\n  +actor_rollout_ref.actor.not_a_field=1\n", "GRPO-Q021", 2),
        ("python3 -m verl.trainer.main_ppo \\\n  data.train_batch_size=lots\n", "GRPO-Q003", 2),
    ],
)
def test_bad_input_is_a_diagnostic_with_its_line(text: str, code: str, line: int) -> None:
    result = check_verl_text(text, "run.sh")
    found = [d for d in result.diagnostics if d.code == code]
    assert found and found[0].line == line and not result.valid, result.diagnostics


def test_unknown_key_suggests_the_close_one() -> None:
    (d,) = [
        d
        for d in check_verl_text("python3 -m verl.trainer.main_ppo data.train_batch_sise=8\n", "r.sh").diagnostics
        if d.code == "GRPO-Q004"
    ]
    assert d.fix is not None and d.fix.rename == {"data.train_batch_sise": "data.train_batch_size"}


def test_yaml_with_defaults_has_positions() -> None:
    text = (
        "defaults:\n  - ppo_trainer\n  - _self_\nalgorithm:\n  adv_estimator: grpo\nactor_rollout_ref:\n"
        "  rollout:\n    n: 1\n"
    )
    assert looks_like_verl(text)
    (d,) = [d for d in check_verl_text(text, "c.yaml").diagnostics if d.code == "GRPO-Q050"]
    assert (d.line, d.column) == (8, 5)


def test_trl_yaml_is_not_taken_for_verl() -> None:
    assert not looks_like_verl("num_generations: 8\nper_device_train_batch_size: 4\n")


def test_separators_inside_an_array_and_huge_numbers_end_quickly() -> None:
    import time

    start = time.monotonic()
    text = (
        'A=( ; | data.train_batch_size=99999999 )\npython3 -m verl.trainer.main_ppo "${A[@]}" '
        "actor_rollout_ref.rollout.n=7 trainer.n_gpus_per_node=7\n"
    )
    result = check_verl_text(text, "run.sh")
    assert time.monotonic() - start < 5 and not result.valid
    assert any(d.code == "GRPO-Q012" for d in result.diagnostics)


def test_an_array_built_only_in_a_branch_is_a_launch_part_not_read() -> None:
    text = (
        'if [ -n "$X" ]; then\n  A=(data.train_batch_size=8)\nfi\n'
        'python3 -m verl.trainer.main_ppo "${A[@]}" actor_rollout_ref.rollout.n=4\n'
    )
    (d,) = [d for d in check_verl_text(text, "run.sh").diagnostics if d.code == "GRPO-Q007"]
    assert d.severity == "warning" and "A is assigned only inside a `if` at line 1" in d.message and d.line == 4


HELD_IN_A_STRING = """\
#!/bin/bash
GPUS=8
CMD="python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=$((GPUS * 8)) \\
    actor_rollout_ref.rollout.n=8 \\
    trainer.project_name=\\"reasoning\\" \\
    trainer.n_gpus_per_node=$GPUS"
if [ "$FP8" = true ]; then
    CMD="$CMD +actor_rollout_ref.actor.optim.eight_bit=True"
fi
CMD="$CMD actor_rollout_ref.actor.ppo_mini_batch_sise=16"
eval $CMD
"""


def test_a_launch_held_in_a_variable_and_run_by_eval() -> None:
    runs, _ = runs_in_script(HELD_IN_A_STRING)
    (run,) = runs
    assert run.last("data.train_batch_size").value == 64 and run.last("trainer.project_name").text == "reasoning"
    assert (run.last("trainer.n_gpus_per_node").line, run.last("trainer.n_gpus_per_node").column) == (8, 5)
    assert run.last("actor_rollout_ref.actor.optim.eight_bit") is None  # only inside the branch
    found = check_verl_text(HELD_IN_A_STRING, "run.sh").diagnostics
    (typo,) = [d for d in found if d.code == "GRPO-Q004"]
    assert typo.line == 12 and "ppo_mini_batch_size" in typo.hint  # the piece CMD="$CMD ..." added
    assert any(d.code == "GRPO-Q008" and "CMD is changed inside a `if` at line 9" in d.message for d in found)
    for runner in ('bash -c "$CMD"', "$CMD", 'eval "${CMD}"'):
        assert len(runs_in_script(HELD_IN_A_STRING.replace("eval $CMD", runner))[0]) == 1, runner


def test_here_documents_are_text_not_script() -> None:
    text = """\
cat > check.py <<'PYEOF'
print(f"it's {1}")
PYEOF
python3 - << "EOF"
print("don't")
EOF
cat <<-END
\tit's indented
\tEND
python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \\
    actor_rollout_ref.rollout.n=1 <<< 'a here-string'
"""
    found = check_verl_text(text, "run.sh").diagnostics
    assert not [d for d in found if d.code == "GRPO-Q009"]
    (group,) = [d for d in found if d.code == "GRPO-Q050"]
    assert (group.line, group.column) == (11, 5)


def test_a_brace_group_runs_and_a_function_body_does_not() -> None:
    text = """\
#!/bin/bash
{
    nodes=${NNODES:-2}
    mini=32
    wait_for_cluster() {
        mini=999
    }
    function cleanup {
        mini=998
    }
    if [[ $RANK -eq 0 ]]; then
        ray job submit --address="http://127.0.0.1:8265" -- python3 -m recipe.dapo.main_dapo \\
            actor_rollout_ref.actor.ppo_mini_batch_size=${mini} trainer.nnodes="${nodes}"
    fi
}
"""
    (run,) = runs_in_script(text)[0]
    assert run.entry == "recipe.dapo.main_dapo" and run.block == "a `if` at line 11"
    assert run.last("trainer.nnodes").value == 2
    mini = run.last(A + "ppo_mini_batch_size")
    assert mini.value == 32 and "inside a `function cleanup` at line 8" in mini.notes[0]


def test_an_unquoted_variable_of_several_overrides_is_split_into_words() -> None:
    text = """\
n_resp=8
ROLLOUT_CONFIG="
    actor_rollout_ref.rollout.name=vllm \\
    actor_rollout_ref.rollout.n=$n_resp \\
    actor_rollout_ref.rollout.val_kwargs.top_p=0.7"
EXTRA=(
    model_engine=dp
    $ROLLOUT_CONFIG
)
python -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "${EXTRA[@]}" $ROLLOUT_CONFIG
"""
    (run,) = runs_in_script(text)[0]
    n = run.last("actor_rollout_ref.rollout.n")
    assert (n.value, n.line, n.column) == (8, 4, 5)
    assert [s.key for s in run.settings].count("actor_rollout_ref.rollout.name") == 2 and not run.unread
    # quoted, it is one word, as the shell passes it: not an override Hydra reads
    (quoted,) = runs_in_script(text.replace('"${EXTRA[@]}" $ROLLOUT_CONFIG', '"${EXTRA[@]}" "$ROLLOUT_CONFIG"'))[0]
    assert len(quoted.settings) == 5 and len(quoted.unread) == 1


def test_a_recipes_own_config_under_the_fully_async_entry() -> None:
    text = """\
ray job submit --no-wait -- python3 -m verl.experimental.fully_async_policy.fully_async_main \\
    --config-path=config --config-name='fully_async_dapo_trainer.yaml' \\
    data.train_batch_size=0 actor_rollout_ref.actor.ppo_mini_batch_size=32 actor_rollout_ref.rollout.n=16 \\
    actor_rollout_ref.actor.use_dynamic_bsz=True async_training.require_batches=4
"""
    found = check_verl_text(text, "run.sh").diagnostics
    assert [d.code for d in found if d.severity != "info"] == []  # async_training is known; no train_batch_size rule


def test_an_assignment_of_a_variable_of_several_words_is_not_split() -> None:
    text = 'OPTS="trainer.nnodes=2 trainer.n_gpus_per_node=4"\nALL=$OPTS\npython3 -m verl.trainer.main_ppo $ALL\n'
    (run,) = runs_in_script(text)[0]
    assert (run.last("trainer.nnodes").value, run.last("trainer.n_gpus_per_node").value) == (2, 4)  # both words

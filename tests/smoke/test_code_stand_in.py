"""`grpo smoke` and open-r1's code rewards, piece by piece: the synthetic rows have the real datasets' shapes and
go through open-r1's prompt pipeline (Arrow stores them), each reference solution scores its reward's best on this
machine's executor before the run, a machine that cannot run the code is named before anything starts, and the
report says the remote sandbox was substituted (or, for code_provider: local, exercised)."""

import json
import shutil

import pytest

from grpo_runtime.data import open_r1
from grpo_runtime.smoke.code import state_code_execution
from grpo_runtime.smoke.data import RowShape, write_rows
from grpo_runtime.smoke.plan import SmokePlan, SmokeRefused
from grpo_runtime.smoke.problems import code_rows

from .test_shapes import open_r1_args

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def recipe(tmp_path, names: list[str], **values):
    """(config, script, funcs, plan) for an open-r1 recipe whose dataset the smoke replaced by synthetic rows."""
    from types import SimpleNamespace

    args = open_r1_args(**values)
    config = SimpleNamespace(
        reward_funcs=names,
        dataset_name="open-r1/x",
        dataset_config=None,
        dataset_train_split="train",
        dataset_test_split="test",
        remove_unused_columns=False,
    )
    funcs = open_r1.reward_funcs(config, args, stand_ins=True)
    shape = RowShape(args.dataset_prompt_column, conversational=False, columns=())
    write_rows(tmp_path / "data" / "train.jsonl", code_rows(funcs, shape, 16, seed=5))
    plan = SmokePlan(seed=5)
    plan.overrides["dataset_name"] = str(tmp_path / "data")
    return config, ("open-r1", args), funcs, plan


@pytest.mark.parametrize(
    "names, columns",
    [
        (["code"], {"verification_info"}),
        (
            ["cf_code", "code_format"],
            {"official_tests", "time_limit", "memory_limit", "input_mode", "generated_checker", "language", "id"},
        ),
        (
            ["ioi_code"],
            {"id", "subtask", "score", "score_precision", "test_names", "grader_files", "test_cases", "year"},
        ),
    ],
)
def test_code_rows_take_the_real_shape_and_go_through_open_r1s_prompts(tmp_path, names, columns):
    config, script, funcs, plan = recipe(
        tmp_path, names, dataset_prompt_column="problem", system_prompt="Think, then answer."
    )
    config.dataset_name = plan.overrides["dataset_name"]
    rows = open_r1.load_prompts(config, script[1])  # datasets' map over the rows, as the run does
    assert columns <= set(rows.column_names) and len(rows) == 16
    assert [m["role"] for m in rows[0]["prompt"]] == ["system", "user"]
    assert code_rows(funcs, RowShape("problem", False, ()), 16, 5) == code_rows(
        funcs, RowShape("problem", False, ()), 16, 5
    )  # seeded


@needs_gxx
@pytest.mark.parametrize(
    "names, said",
    [
        (["code"], "the reference solutions (python) score 1.0 with code_reward"),
        (["cf_code"], "the reference solutions (cpp, python) score 1.1 with cf_code_reward"),
    ],
)
def test_the_reference_solutions_are_scored_before_the_run(tmp_path, names, said):
    config, script, funcs, plan = recipe(tmp_path, names)
    state_code_execution(config, script, funcs, plan)
    group = plan.groups[-1]
    assert group.group == "code execution" and group.status == "substituted", group
    assert "-> this machine's local executor" in group.detail and said in group.detail
    assert ("E2B" if names == ["code"] else "Piston") in group.detail


def test_code_provider_local_is_exercised_as_written(tmp_path):
    config, script, funcs, plan = recipe(tmp_path, ["binary_code"], code_provider="local")
    state_code_execution(config, script, funcs, plan)
    assert plan.groups[-1].status == "exercised" and "code_provider: local, as written" in plan.groups[-1].detail


def test_a_machine_without_gxx_is_named_before_the_run(tmp_path, monkeypatch):
    config, script, funcs, plan = recipe(tmp_path, ["cf_code"])
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SmokeRefused) as refused:
        state_code_execution(config, script, funcs, plan)
    assert refused.value.component == "code execution" and "g++, which is not installed" in str(refused.value)


def test_rows_a_reference_fails_on_are_refused_with_the_score(tmp_path):
    config, script, funcs, plan = recipe(tmp_path, ["code"])
    path = tmp_path / "data" / "train.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row["verification_info"]["test_cases"][0]["output"] = "not what it prints\n"
    write_rows(path, rows)
    with pytest.raises(
        SmokeRefused,
        match="scored the reference python solution of a synthetic problem "
        "0.6666666666666666 with code_reward instead of 1.0",
    ):
        state_code_execution(config, script, funcs, plan)

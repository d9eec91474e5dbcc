"""The smoke's stand-ins have the shape the real data would have, and the pipeline reads real shapes: open-r1's
prompt column with and without a system prompt (text, or a conversation already), mixtures whose entries keep
different columns, paths of another machine, the batch bound that keeps the schedule's shape."""

import json
from types import SimpleNamespace

import pytest

from grpo_runtime.smoke.data import RowShape, substitute_mixture, synthetic_rows
from grpo_runtime.smoke.plan import SmokePlan, content_seed
from grpo_runtime.smoke.settings import bound_batch

from .conftest import run_smoke


def open_r1_args(**values):
    from grpo_schema.engine.profiles.open_r1_args import OpenR1ScriptArgs

    return OpenR1ScriptArgs(**values)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize("system_prompt", [None, "You are a careful solver."])
@pytest.mark.parametrize("conversational", [False, True])
def test_open_r1_prompts_from_text_or_a_conversation_with_and_without_a_system_prompt(
    tmp_path, system_prompt, conversational
):
    """A system prompt beside a conversational prompt column failed in datasets' map with `ArrowInvalid: cannot
    mix list and non-list, non-null values` (the conversation nested as a message's content)."""
    import grpo_runtime.data.open_r1 as open_r1

    question = [{"role": "user", "content": "What is 1 + 1?"}] if conversational else "What is 1 + 1?"
    data = write_jsonl(tmp_path / "data.jsonl", [{"prompt": question, "solution": "$2$"}] * 3)
    config = SimpleNamespace(
        dataset_name=str(data),
        dataset_config=None,
        dataset_train_split="train",
        dataset_test_split="test",
        remove_unused_columns=False,
    )
    rows = open_r1.load_prompts(config, open_r1_args(system_prompt=system_prompt))
    expected = ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [
        {"role": "user", "content": "What is 1 + 1?"}
    ]
    assert rows[0]["prompt"] == expected and rows[0]["solution"] == "$2$"


def test_a_conversation_with_its_own_system_message_keeps_it(tmp_path):
    import grpo_runtime.data.open_r1 as open_r1

    own = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "2 + 2?"}]
    data = write_jsonl(tmp_path / "data.jsonl", [{"problem": own}] * 2)
    config = SimpleNamespace(
        dataset_name=str(data),
        dataset_config=None,
        dataset_train_split="train",
        dataset_test_split="test",
        remove_unused_columns=True,
    )
    rows = open_r1.load_prompts(config, open_r1_args(system_prompt="Think first.", dataset_prompt_column="problem"))
    assert rows[0]["prompt"] == own and rows.column_names == ["prompt"]


def test_synthetic_rows_take_the_pipelines_shape_and_the_files_seed():
    text = synthetic_rows(RowShape("problem", conversational=False, columns=("solution",)), 8, seed=7)
    assert isinstance(text[0]["problem"], str) and text[0]["solution"].startswith("$")
    chat = synthetic_rows(RowShape(columns=("answer",)), 8, seed=7)
    assert chat[0]["prompt"][0]["role"] == "user" and set(chat[0]) == {"prompt", "answer"}
    assert synthetic_rows(RowShape(), 8, seed=7) == synthetic_rows(RowShape(), 8, seed=7)
    assert synthetic_rows(RowShape(), 8, seed=7) != synthetic_rows(RowShape(), 8, seed=8)


def test_the_seed_is_the_files_content(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("seed: 1\n")
    b.write_text("seed: 2\n")
    assert content_seed(str(a), [], []) == content_seed(str(a), [], [])
    assert content_seed(str(a), [], []) != content_seed(str(b), [], [])
    assert content_seed(str(a), ["beta=0.1"], []) != content_seed(str(a), [], [])


def test_a_mixture_stays_a_mixture_with_each_entrys_columns(tmp_path):
    """Entries that keep different columns: each synthetic file has its own entry's columns, and the mixture's
    real loading runs on them (here the columns agree after the cut, so it concatenates)."""
    from grpo_runtime.data.datasets import load_mixture
    from grpo_schema.engine.params.data import DatasetEntry

    entries = [DatasetEntry(path="org/a", columns=["prompt", "solution"]), DatasetEntry(path="org/b")]
    config = SimpleNamespace(datasets=entries)
    plan = SmokePlan(seed=3)
    substitute_mixture(config, {"solution": "accuracy_reward"}, plan, tmp_path / "data", "not cached")
    written = [DatasetEntry(**entry) for entry in plan.overrides["datasets"]]
    assert [e.columns for e in written] == [["prompt", "solution"], None]
    splits = load_mixture(written, 0.25, seed=0)
    assert sorted(splits["train"].column_names) == ["prompt", "solution"] and len(splits["test"]) == 32
    assert "a mixture of 2 synthetic datasets" in plan.groups[-1].detail


def test_the_batch_bound_keeps_the_schedule(tmp_path):
    from grpo_schema import check_file

    path = tmp_path / "run.yaml"
    path.write_text(
        "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/DeepMath-103K\n"
        "reward_funcs: [accuracy_reward]\nper_device_train_batch_size: 16\nnum_generations: 16\n"
        "gradient_accumulation_steps: 16\nnum_iterations: 2\nuse_cpu: true\n"
    )
    plan = SmokePlan()

    def checked(size):
        return check_file(str(path), world_size=size, overrides=plan.set_strings())

    before = checked(1).plan
    config = checked(1).config
    bound_batch(config, plan, checked)
    after = checked(1).plan
    assert plan.overrides["per_device_train_batch_size"] == 4  # 4 rows x 16 micro-steps: 64 rows, 4 groups
    assert (after.steps_per_generation, after.generate_every_micro_steps) == (
        before.steps_per_generation,
        before.generate_every_micro_steps,
    )
    assert "the same schedule" in plan.groups[-1].detail


@pytest.mark.slow
def test_a_dataset_path_of_another_machine_is_substituted_and_said_so(workspace):
    code, report = run_smoke(workspace(dataset_name="/workspace/cluster-only/math/train.jsonl"))
    assert code == 0 and report["passed"], report
    dataset = next(g for g in report["groups"] if g["group"] == "dataset")
    assert dataset["status"] == "substituted" and "path of another machine" in dataset["detail"]
    assert "/workspace/cluster-only/math/train.jsonl" in dataset["detail"]


def test_frames_are_ordered_the_users_then_ours_then_the_libraries(tmp_path):
    """A compiled library's frames name files that are not on this machine (pyarrow's `array.pxi`): they are the
    library's, never put first as the user's own."""
    import json as json_module

    from grpo_runtime.smoke import faults

    user_file = tmp_path / "my_rewards.py"
    user_file.write_text("x = 1\n")
    assert faults.frame_owner("pyarrow/array.pxi") == "library"
    assert faults.frame_owner(json_module.__file__) == "library"
    assert faults.frame_owner(faults.__file__) == "ours"
    assert faults.frame_owner(str(user_file)) == "user"


@pytest.mark.parametrize(
    "name, said",
    [
        ("code", "remote code sandbox"),
        ("cf_code", "Piston"),
        ("think_format", "experiment branches"),
        ("soft_format", "experiment branches"),
    ],
)
def test_an_open_r1_reward_that_cannot_run_here_is_refused_with_why_not_as_unknown(name, said):
    """open-r1 registers these names; `grpo train` says why they do not run here (it said 'not in open-r1's
    registry', which sends the user looking for a typo). `grpo smoke` gives each a stand-in: the local executor
    for a sandboxed one (tests/smoke/test_code_stand_in.py), grpo_runtime.data.branch_rewards for a branch's."""
    import grpo_runtime.data.open_r1 as open_r1

    config = SimpleNamespace(reward_funcs=[name])
    with pytest.raises(ValueError) as refused:
        open_r1.reward_funcs(config, open_r1_args())
    assert said in str(refused.value) and "not in open-r1's registry" not in str(refused.value)
    built = open_r1.reward_funcs(config, open_r1_args(), stand_ins=True)[0]
    if said == "experiment branches":
        assert built.stand_in_for == name
    else:
        assert type(built).__name__.endswith("Reward") and not hasattr(built, "stand_in_for")


def test_the_branch_stand_ins_score_what_their_kind_scores():
    from grpo_runtime.data import branch_rewards

    def said(text):
        return [{"role": "assistant", "content": text}]

    loose, strict = said("<think>so</think> <answer>4</answer>"), said("<think>\nso\n</think>\n<answer>\n4\n</answer>")
    assert branch_rewards.soft_format_stand_in([loose, strict, said("4")]) == [1.0, 1.0, 0.0]
    assert branch_rewards.think_format_stand_in([said("<think>a</think>"), said("<think>a")]) == [1.0, 0.0]
    # the answer after the thinking counts, not a number inside it
    right, wrong = said("<think>$5$</think> $\\boxed{4}$"), said("<think>$4$</think> $\\boxed{5}$")
    assert branch_rewards.think_accuracy_stand_in([right, wrong], solution=["$4$", "$4$"]) == [1.0, 0.0]


@pytest.mark.slow
def test_an_experiment_branch_reward_is_scored_by_a_stand_in_and_said_so(workspace):
    """An open-r1 recipe of an experiment branch (corpus 11 names soft_format) smokes; grpo train still refuses."""
    path = workspace(reward_funcs=["accuracy", "soft_format"], dataset_name="open-r1/OpenR1-Math-220k")
    code, report = run_smoke(path, "--profile", "open-r1")
    assert code == 0 and report["passed"], report
    rewards = [g for g in report["groups"] if g["group"] == "reward functions"]
    assert [g["status"] for g in rewards] == ["substituted", "exercised"], rewards
    assert "soft_format -> a loose" in rewards[0]["detail"] and "grpo train refuses" in rewards[0]["detail"]
    assert rewards[1]["detail"].startswith("accuracy_reward on real generated completions"), rewards

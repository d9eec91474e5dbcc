"""`grpo train --profile open-r1`: an open-r1 recipe runs as open-r1's grpo.py would run it (system prompt, prompt
column, chat template, dataset mixture, its reward names and their parameters), on a tiny local dataset."""

import json

import pytest
import yaml

from grpo_runtime.data import open_r1
from grpo_runtime.launch.cli import EXIT_CANNOT_RUN, train_command

from .helpers import base_settings

TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def write_rows(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def recipe(tmp_path, model_dir, **fields):
    settings = base_settings(model_dir, None, tmp_path / "out")
    del settings["dataset_name"]
    settings.update(
        reward_funcs=["format", "tag_count", "length"],
        max_steps=2,
        save_steps=2,
        log_completions=True,
        system_prompt="You are a careful assistant.",
        dataset_prompt_column="problem",
        chat_template=TEMPLATE,
    )
    settings.update(fields)
    return settings


@pytest.mark.slow
def test_an_open_r1_recipe_runs_as_written(tmp_path, tiny_model_dir):
    cats = write_rows(
        tmp_path / "cats.jsonl", [{"problem": f"say cat {i}", "solution": "cat", "messages": "x"} for i in range(8)]
    )
    stars = write_rows(
        tmp_path / "stars.jsonl", [{"problem": f"say star {i}", "solution": "star", "other": 1} for i in range(8)]
    )
    settings = recipe(
        tmp_path,
        tiny_model_dir,
        dataset_mixture={
            "seed": 5,
            "datasets": [
                {"id": str(cats), "columns": ["problem", "solution"], "weight": 0.5},
                {"id": str(stars), "columns": ["problem", "solution"]},
            ],
        },
    )
    config = tmp_path / "recipe.yaml"
    config.write_text(yaml.safe_dump(settings))
    assert train_command([str(config), "--dry-run"]) == 0  # written for open-r1: run under its profile unasked
    assert train_command([str(config), "--profile", "open-r1"]) == 0

    out = tmp_path / "out"
    lines = [json.loads(x) for x in (out / "completions.jsonl").read_text().splitlines()]
    for line in lines:
        system, user = line["prompt"]
        assert system == {"role": "system", "content": "You are a careful assistant."}
        assert user["role"] == "user" and user["content"].startswith(("say cat", "say star"))
        assert set(line["rewards"]) == {"format_reward", "tag_count_reward", "len_reward"}
    metrics = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
    assert "rewards/len_reward/mean" in metrics and "rewards/tag_count_reward/mean" in metrics
    assert (out / "chat_template.jinja").read_text() == TEMPLATE  # the recipe's template was used and saved


def test_mixture_weights_and_prompts_follow_open_r1(tmp_path):
    from grpo_schema import check_text

    cats = write_rows(tmp_path / "cats.jsonl", [{"q": f"cat {i}", "messages": "x"} for i in range(10)])
    stars = write_rows(tmp_path / "stars.jsonl", [{"q": f"star {i}"} for i in range(4)])
    text = yaml.safe_dump(
        dict(
            model_name_or_path="m",
            reward_funcs=["format"],
            dataset_prompt_column="q",
            dataset_mixture={
                "seed": 1,
                "test_split_size": 0.25,
                "datasets": [{"id": str(cats), "weight": 0.4}, {"id": str(stars)}],
            },
        )
    )
    result = check_text(text, profiles=["open-r1"])
    assert result.valid, [d.message for d in result.diagnostics]
    args = result.profile_args["open-r1"]
    train, test = open_r1.load_prompts(result.config, args), open_r1.load_prompts(result.config, args, "test")
    assert len(train) + len(test) == 4 + 4 and len(test) == 2  # 40% of the 10 cats, all 4 stars
    assert "messages" not in train.column_names
    assert train[0]["prompt"][0]["role"] == "user"  # no system prompt set: the user message alone
    words = [row["prompt"][0]["content"].split()[0] for row in train] + [
        r["prompt"][0]["content"].split()[0] for r in test
    ]
    assert sorted(words) == ["cat"] * 4 + ["star"] * 4


def test_open_r1_rewards_with_the_scripts_parameters():
    from types import SimpleNamespace

    args = SimpleNamespace(
        cosine_min_value_wrong=0.0,
        cosine_max_value_wrong=-0.5,
        cosine_min_value_correct=0.5,
        cosine_max_value_correct=1.0,
        cosine_max_len=100,
        repetition_n_grams=2,
        repetition_max_penalty=-1.0,
        code_language="python",
        max_completion_len=10,
        soft_punish_cache=4,
    )
    good = "<think>\nfirst\n</think>\n<answer>\n\\boxed{2}\n</answer>"
    assert open_r1.format_reward([good, "no tags"]) == [1.0, 0.0]
    assert open_r1.tag_count_reward([good, "<think>\nx"]) == [1.0, 0.25]
    assert open_r1.reasoning_steps_reward(["Step 1: a\nStep 2: b", "First, a. Second, b. Finally, c"]) == [
        pytest.approx(2 / 3),
        1.0,
    ]
    cosine = open_r1.REGISTRY["cosine"](args)
    assert cosine([good], solution=["$2$"]) == [
        pytest.approx(0.5 + 0.25 * (1 + __import__("math").cos(len(good) / 100 * __import__("math").pi)))
    ]
    assert open_r1.REGISTRY["repetition_penalty"](args)(["a b a b a b", "a b c d"]) == [pytest.approx(-0.6), 0.0]
    punish = open_r1.REGISTRY["soft_overlong_punishment"](args)
    assert punish(completion_ids=[[1] * 6, [1] * 8, [1] * 11]) == [0.0, -0.5, -1.0]
    assert open_r1.len_reward(["$4$", "$44$"], solution=["$5$", "$5$"]) == [0.0, -0.5]  # both wrong: penalty only


def test_sandbox_rewards_are_refused_before_loading(tmp_path, capsys):
    settings = recipe(
        tmp_path, tmp_path / "no-model-here", dataset_name=str(tmp_path / "d.jsonl"), reward_funcs=["accuracy", "code"]
    )
    config = tmp_path / "recipe.yaml"
    config.write_text(yaml.safe_dump(settings))
    for dry_run in (["--dry-run"], []):  # --dry-run knows it too
        assert train_command([str(config), "--profile", "open-r1", *dry_run]) == EXIT_CANNOT_RUN
        assert (
            "error[GRPO-U004] reward_funcs: open-r1's 'code' reward runs each completion's code remotely in "
            "E2B's hosted sandboxes (the e2b-code-interpreter package and an E2B API key)" in capsys.readouterr().err
        )


@pytest.mark.slow
def test_code_provider_local_runs_the_code_reward_on_this_machine(tmp_path, tiny_model_dir):
    """The recipe asks for local execution: `grpo train` runs open-r1's `code` reward on the local executor."""
    info = {"language": "python", "test_cases": [{"input": "1 2\n", "output": "3\n", "type": "stdin_stdout"}]}
    data = write_rows(tmp_path / "code.jsonl", [{"problem": f"add {i}", "verification_info": info} for i in range(8)])
    settings = recipe(
        tmp_path,
        tiny_model_dir,
        dataset_name=str(data),
        reward_funcs=["code", "format"],
        code_provider="local",
        parallel_code_exec_per_proc=2,
    )
    config = tmp_path / "recipe.yaml"
    config.write_text(yaml.safe_dump(settings))
    assert train_command([str(config), "--profile", "open-r1"]) == 0
    lines = [json.loads(x) for x in (tmp_path / "out" / "completions.jsonl").read_text().splitlines()]
    assert lines and all(set(line["rewards"]) == {"code_reward", "format_reward"} for line in lines)


def test_each_sandboxed_reward_names_the_service_its_script_arguments_choose():
    from types import SimpleNamespace

    config = SimpleNamespace(reward_funcs=["code", "ioi_code", "cf_code", "accuracy"])
    found = open_r1.refusals(config, SimpleNamespace(code_provider="morph", ioi_provider="morph"))
    assert len(found) == 3 and "MorphCloud" in found[0] and "MorphCloud" in found[1] and "Piston" in found[2]
    assert "E2B" in open_r1.refusals(SimpleNamespace(reward_funcs=["code"]), SimpleNamespace(code_provider=None))[0]
    routed = open_r1.refusals(config, SimpleNamespace(code_provider="e2b", e2b_router_url="10.0.0.1:8000"))[0]
    assert "through the router at 10.0.0.1:8000" in routed and "code_provider: local" in routed
    local = SimpleNamespace(code_provider="local", ioi_provider="piston")
    assert [m.split("'")[2] for m in open_r1.refusals(config, local)] == ["ioi_code", "cf_code"]  # no local option
    assert open_r1.refusals(config, local, stand_ins=True) == []  # grpo smoke's stand-in

"""`grpo smoke` on run files shaped as people keep them on a training cluster (tests/smoke/heldout, written for these
tests, not taken from anyone): after `grpo migrate`, every path of another machine (model, dataset, DeepSpeed file)
is substituted and said so, an open-r1 recipe's system prompt, prompt column, chat template, LoRA and vLLM keys
run or are named, and rewards named by a module path beside the file run on real completions."""

import json
import shutil

import pytest

from .test_examples import grpo

pytestmark = pytest.mark.slow
HELDOUT = __import__("pathlib").Path(__file__).parent / "heldout"


def smoked(tmp_path, name):
    for source in HELDOUT.iterdir():
        if source.is_file():
            shutil.copy(source, tmp_path / source.name)
    assert grpo("migrate", "--write", name, cwd=tmp_path).returncode == 0
    done = grpo("smoke", name, "--format", "json", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["passed"], {k: report.get(k) for k in ("component", "error", "log")}
    return {g["group"]: (g["status"], g["detail"]) for g in report["groups"]}


def test_an_open_r1_recipe_of_a_cluster_smokes_with_every_path_stated(tmp_path):
    groups = smoked(tmp_path, "open_r1_cluster.yaml")
    for group, path in (
        ("model", "/fsx/team/checkpoints/Qwen2.5-Math-1.5B-sft"),
        ("dataset", "/workspace/datasets/competition_math_conv"),
        ("DeepSpeed config", "/home/trainer/configs/deepspeed/zero2.json"),
    ):
        status, detail = groups[group]
        assert status == "substituted" and "path of another machine" in detail and path in detail, groups[group]
    assert "with the system prompt" in groups["dataset"][1] and "problem" in groups["dataset"][1]
    assert groups["sharding"] == ("exercised", "the DeepSpeed stand-in on gloo")
    assert groups["PEFT and quantisation"][0] == "exercised" and groups["generation"][0] == "not_exercised"
    assert groups["reward functions"][0] == "exercised"


def test_module_path_rewards_beside_the_file_run_on_a_substituted_dataset(tmp_path):
    groups = smoked(tmp_path, "trl_module_rewards.yaml")
    assert groups["reward functions"] == ("exercised", "answer_in_tags, short_enough on real generated completions")
    status, detail = groups["dataset"]
    assert (
        status == "substituted" and "target (read by answer_in_tags)" in detail and "path of another machine" in detail
    )
    assert groups["DeepSpeed config"][0] == "substituted" and "ZeRO stage 3" in groups["DeepSpeed config"][1]
    assert "num_iterations 2, steps_per_generation 8" in groups["schedule"][1]

"""`grpo explain`, `grpo validate --fix` and `grpo validate --world-sizes` (in process; the usage errors' exit status
through `python -m grpo_schema`)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import CORPUS, REPO
from tests.support.cli import grpo as grpo_command

VALID = """\
# a small run
per_device_train_batch_size: 4   # completions per process per micro-step
num_generations: 4
gradient_accumulation_steps: 2
steps_per_generation: 2
num_iterations: 2
seed: 0
"""
INTERFACE_KEYS = {
    "world_size",
    "generation_batch_size",
    "steps_per_generation",
    "prompts_per_generation",
    "completions_per_optimizer_step",
    "optimizer_steps_per_generation",
    "generate_every_micro_steps",
    "old_logprobs_needed",
}


def grpo(*args: str, stdin: str | None = None):
    return grpo_command(*args, stdin=stdin, cwd=REPO)


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(VALID)
    return path


def test_explain_text_walks_the_worked_example(config):
    done = grpo("explain", str(config), "--world-size", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "micro-step 0 | generation 1: GENERATE | train on slice 1 of 2, pass 1 of 2" in out
    assert "process 1 gets sampler batch 1: prompts #3-#4 (x4 each)" in out
    assert "micro-step 1 | skip sampler batches 2-3 (copies of micro-step 0's)" in out
    assert "OPTIMIZER STEP 1 (2 micro-steps accumulated)" in out
    assert "Why steps_per_generation appears twice" in out


def test_explain_json_document(config):
    done = grpo("explain", str(config), "--world-size", "2", "--dataset-size", "16", "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert {"version", "path", "valid", "world_size", "derived", "schedule", "diagnostics"} <= set(document)
    assert INTERFACE_KEYS | {"optimizer_steps_per_epoch"} <= set(document["derived"])
    assert document["derived"]["optimizer_steps_per_epoch"] == 8
    assert document["schedule"][0]["generates"] and document["schedule"][0]["processes"][1]["prompts"] == [
        {"position": 2, "copies": 4, "index": None},
        {"position": 3, "copies": 4, "index": None},
    ]


def test_explain_takes_overrides_in_both_forms(config):
    done = grpo("explain", str(config), "--format", "json", "--set", "num_iterations=1", "--num_generations", "8")
    derived = json.loads(done.stdout)["derived"]
    assert (derived["num_iterations"], derived["num_generations"]) == (1, 8)
    assert derived["inputs"]["num_generations"]["source"] == "command line"


def test_explain_invalid_geometry_exits_1_with_fixes(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("per_device_train_batch_size: 3\nnum_generations: 4\n")
    done = grpo("explain", str(path), "--format", "json")
    document = json.loads(done.stdout)
    assert done.returncode == 1 and document["schedule"] == [] and not document["valid"]
    b001 = next(d for d in document["diagnostics"] if d["code"] == "GRPO-B001")
    assert b001["fix"] is not None and b001["alternatives"]
    assert "there is no schedule" in grpo("explain", str(path)).stdout


@pytest.mark.parametrize("args", [("missing.yaml",), ("run.yaml", "--dataset-size", "0"), ()])
def test_explain_usage_errors_exit_2(args, config):
    done = grpo_command("explain", *args, cwd=config.parent)
    assert done.returncode == 2


def test_explain_reads_stdin():
    done = grpo("explain", "-", "--format", "json", stdin=VALID)
    assert done.returncode == 0 and json.loads(done.stdout)["path"] == "<stdin>"


def test_validate_fix_applies_safe_fixes_in_place(tmp_path):
    path = tmp_path / "old.yaml"
    original = "# keep me\ntorch_dtype: bfloat16  # weights\nmax_prompt_length: 512\nnum_generations: 3\n"
    path.write_text(original)
    done = grpo("validate", "--fix", str(path))
    assert path.read_text() == "# keep me\ndtype: bfloat16  # weights\nnum_generations: 3\n"
    assert "applied 2 safe fixes" in done.stderr
    assert done.returncode == 1 and "GRPO-B001" in done.stdout  # the batch fix needs a person
    assert grpo("validate", "--fix", "-", stdin=original).returncode == 2


def test_validate_world_sizes_matrix_of_an_example():
    recipe = str(REPO / "examples" / "open-r1.yaml")
    done = grpo("validate", "--world-sizes", "1-16", "--profile", "open-r1", recipe)
    assert done.returncode == 1 and "valid at 2 of 16 world sizes: 7, 14" in done.stdout
    assert "1-6, 8-13, 15-16         GRPO-B001" in done.stdout and "7, 14                    none" in done.stdout


def test_validate_world_sizes_matrix(shared_dir):
    recipe = str(CORPUS / "valid" / "07_open-r1_Qwen2.5-Math-7B_config_simple_rl.yaml")
    done = grpo("validate", "--world-sizes", "1-16", "--profile", "open-r1", recipe)
    assert done.returncode == 1
    assert "valid at 0 of 16 world sizes" in done.stdout  # the removed keys fail everywhere
    assert "errors at every world size (fix these first): GRPO-K002, GRPO-K003" in done.stdout
    assert "7, 14                    none" in done.stdout
    as_json = json.loads(grpo("validate", "--world-sizes", "1-16", "--format", "json", recipe).stdout)
    matrix = as_json["files"][0]["world_sizes"]
    assert matrix["checked"] == list(range(1, 17)) and "GRPO-B001" in matrix["by_world_size"]["8"]


def test_validate_world_sizes_exit_code_and_bad_spec(config):
    assert grpo("validate", "--world-sizes", "1,2,4", str(config)).returncode == 0
    assert (
        grpo("validate", "--world-sizes", "1-3", "--set", "per_device_train_batch_size=1", str(config)).returncode == 1
    )
    assert grpo("validate", "--world-sizes", "3-1", str(config)).returncode == 2

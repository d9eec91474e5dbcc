"""`grpo validate` and `grpo codes` as a user runs them: real files, exit codes and formats (in process; the first
test and the import test as real processes)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import CORPUS
from tests.support.cli import grpo

GOOD = "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\nper_device_train_batch_size: 8\n"


@pytest.fixture
def good_file(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(GOOD)
    return path


def test_valid_file_exits_zero_with_a_summary(good_file):
    done = grpo("validate", str(good_file), subprocess=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid at world size 1" in done.stdout


def test_invalid_file_exits_one_and_shows_the_source_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD + "num_generations: 3\n")
    done = grpo("validate", str(path))
    assert done.returncode == 1
    assert f"{path}:5:1: error[GRPO-B001]" in done.stdout
    assert "    5 | num_generations: 3" in done.stdout and "help:" in done.stdout


def test_unreadable_path_and_bad_usage_exit_two(tmp_path):
    assert grpo("validate", str(tmp_path / "missing.yaml")).returncode == 2
    assert grpo("validate", str(tmp_path), "--world-size", "0").returncode == 2
    assert grpo("validate", "--profile", "nobody", "-").returncode == 2


def test_json_format_is_one_document(good_file, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_generation: 4\n")
    done = grpo("validate", str(good_file), str(bad), "--format", "json")
    doc = json.loads(done.stdout)
    assert doc["version"] == 1 and [f["valid"] for f in doc["files"]] == [True, False]
    diag = doc["files"][1]["diagnostics"][0]
    assert set(diag) >= {"code", "severity", "message", "fields", "line", "column", "hint", "fix"}
    assert diag["code"] == "GRPO-K001" and diag["hint"] == "did you mean num_generations?"
    assert doc["files"][0]["derived"]["generation_batch_size"] == 8


def test_github_format_annotates_lines(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD + "temperature: -1\n")
    done = grpo("validate", str(path), "--format", "github")
    assert done.returncode == 1
    assert f"::error file={path},line=5,col=1,title=GRPO-T002::temperature must be" in done.stdout


def test_stdin_and_directories(tmp_path):
    assert grpo("validate", "-", stdin=GOOD).returncode == 0
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.yml").write_text("num_generations: 1\n")
    (tmp_path / "notes.txt").write_text("not a config")
    done = grpo("validate", str(tmp_path), "--format", "json")
    assert [f["valid"] for f in json.loads(done.stdout)["files"]] == [True, False]


def test_strict_fails_on_warnings(good_file, tmp_path):
    path = tmp_path / "warn.yaml"
    path.write_text(GOOD + "gradient_checkpointing: true\n")
    assert grpo("validate", str(path)).returncode == 0
    assert grpo("validate", "--strict", str(path)).returncode == 1


def test_overrides_in_both_forms_win_and_say_where_they_came_from(good_file):
    done = grpo("validate", str(good_file), "--set", "num_generations=3", "--format", "json")
    diag = json.loads(done.stdout)["files"][0]["diagnostics"][0]
    assert diag["code"] == "GRPO-B001" and diag["origin"] == "cli" and diag["line"] is None
    # TRL's own command line carries over: --config, --key value, lists, bare flags, hyphens
    done = grpo(
        "validate",
        "--config",
        str(good_file),
        "--num-generations",
        "4",
        "--reward_funcs",
        "accuracy_reward",
        "think_format_reward",
        "--no_shuffle_dataset",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stdout
    done = grpo("validate", "--config", str(good_file), "--learning_rate", "abc")
    assert done.returncode == 1 and "(from the command line)" in done.stdout


def test_world_size_flag_and_num_processes(tmp_path):
    path = tmp_path / "r1.yaml"
    path.write_text(
        GOOD.replace("8\n", "2\n") + "num_generations: 14\ngradient_accumulation_steps: 4\nnum_processes: 7\n"
    )
    assert grpo("validate", str(path)).returncode == 0
    assert grpo("validate", str(path), "--world-size", "8").returncode == 1


def test_profile_flag_accepts_downstream_keys(tmp_path):
    path = tmp_path / "r1.yaml"
    path.write_text(GOOD + "system_prompt: be brief\n")
    assert grpo("validate", str(path)).returncode == 1
    assert grpo("validate", str(path), "--profile", "open-r1").returncode == 1  # accuracy_reward: not open-r1's
    path.write_text(GOOD.replace("accuracy_reward", "accuracy") + "system_prompt: be brief\n")
    assert grpo("validate", str(path), "--profile", "open-r1").returncode == 0


def test_codes_lists_and_explains():
    listing = grpo("codes").stdout
    assert "GRPO-B001" in listing and "GRPO-E003" in listing and "GRPO-Y006" in listing
    explained = grpo("codes", "B001")
    assert explained.returncode == 0 and "num_generations" in explained.stdout
    assert grpo("codes", "GRPO-Z999").returncode == 2


def test_import_pulls_no_heavy_modules():
    code = (
        "import sys, grpo_schema; grpo_schema.check_text('num_generations: 4'); "
        "print(sorted(m for m in ('torch', 'transformers', 'accelerate', 'pydantic.main') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]"


@pytest.mark.shared
def test_whole_corpus_directory_never_crashes():
    done = grpo("validate", str(CORPUS), "--format", "json")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(json.loads(done.stdout)["files"]) == len(list(CORPUS.rglob("*.yaml")))

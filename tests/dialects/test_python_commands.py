"""The commands on Python scripts and notebooks: `grpo validate DIR` judges the scripts and notebooks under it that
build a GRPOConfig (and only those), and plan, doctor and explain judge every call of a file, one picked with
--call N as `grpo export` picks it. In process (grpo_schema.cli.main), on files written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import grpo

BAD_BATCH = """from trl import GRPOConfig

args = GRPOConfig(
    output_dir="out",
    per_device_train_batch_size=3,
    num_generations=4,
)
"""
GOOD = """from trl import GRPOConfig

args = GRPOConfig(output_dir="out", per_device_train_batch_size=4, num_generations=4)
"""
TWO_CALLS = """from trl import GRPOConfig

small = GRPOConfig(output_dir="small", per_device_train_batch_size=4, num_generations=4,
                   max_completion_length=256)
large = GRPOConfig(output_dir="large", per_device_train_batch_size=8, num_generations=8,
                   gradient_accumulation_steps=2, max_completion_length=1024)
"""
NO_CALL = "import os\nprint(os.getcwd())\n"
PARSER_ONLY = "from trl import GRPOConfig, TrlParser\n\nparser = TrlParser((GRPOConfig,))\n"
YAML = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/tldr\nreward_funcs: [accuracy_reward]\n"
    "per_device_train_batch_size: 4\nnum_generations: 4\n"
)


def notebook(*cells: str) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "metadata": {},
                    "execution_count": None,
                    "outputs": [],
                    "source": cell.splitlines(keepends=True),
                }
                for cell in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "run.yaml").write_text(YAML)
    (tmp_path / "train.py").write_text(BAD_BATCH)
    (tmp_path / "notes.ipynb").write_text(
        notebook(
            "!pip install trl==0.22.2",
            "N = 4",
            "from trl import GRPOConfig\n"
            "cfg = GRPOConfig(output_dir='o', per_device_train_batch_size=N,\n"
            "                 num_generations=N)",
        )
    )
    (tmp_path / "utils.py").write_text(NO_CALL)
    (tmp_path / "cli_args.py").write_text(PARSER_ONLY)
    installed = tmp_path / ".venv" / "lib" / "site-packages" / "trl"
    installed.mkdir(parents=True)
    (installed / "example.py").write_text(BAD_BATCH.replace("out", "installed"))
    return tmp_path


def test_a_directory_walk_judges_its_scripts_and_notebooks_that_build_a_config(project):
    done = grpo("validate", project, "--trl-version", "1.16.0", "--format", "json")
    files = json.loads(done.stdout)["files"]
    shown = sorted(Path(f["path"]).relative_to(project).as_posix() for f in files)
    # utils.py and cli_args.py build no config and are left out without a word; .venv is installed code.
    assert shown == ["configs/run.yaml", "notes.ipynb[cell 2]", "train.py"]
    by_path = {Path(f["path"]).name: f for f in files}
    assert [d["code"] for d in by_path["train.py"]["diagnostics"] if d["severity"] == "error"] == ["GRPO-B001"]
    assert by_path["notes.ipynb[cell 2]"]["valid"] and by_path["run.yaml"]["valid"]
    assert done.returncode == 1 and done.stderr == ""


def test_the_walk_in_text_and_sarif_and_the_exit_code_of_a_valid_tree(project):
    (project / "train.py").write_text(GOOD)
    text = grpo("validate", project, "--trl-version", "1.16.0")
    assert text.returncode == 0 and "train.py" in text.stdout and "notes.ipynb" in text.stdout
    assert "utils.py" not in text.stdout and "cli_args.py" not in text.stdout and "installed" not in text.stdout
    (project / "train.py").write_text(BAD_BATCH)
    sarif = json.loads(grpo("validate", project, "--trl-version", "1.16.0", "--format", "sarif").stdout)
    located = [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in sarif["runs"][0]["results"]
        if r["level"] == "error"
    ]
    assert [(code, uri.rsplit("/", 1)[-1], line) for code, uri, line in located] == [("GRPO-B001", "train.py", 6)]


def test_a_file_named_on_the_command_line_is_always_answered(project):
    done = grpo("validate", project / "utils.py", "--trl-version", "1.16.0", "--format", "json")
    (only,) = json.loads(done.stdout)["files"]
    assert [d["code"] for d in only["diagnostics"]] == ["GRPO-F002"] and done.returncode == 0


def test_a_tree_with_no_config_is_a_usage_error(tmp_path):
    (tmp_path / "utils.py").write_text(NO_CALL)
    done = grpo("validate", tmp_path)
    assert done.returncode == 2 and "no config file under" in done.stderr


def test_yaml_only_options_walk_yaml_and_say_what_they_left_out(project):
    done = grpo("validate", project, "--trl-version", "1.16.0", "--world-sizes", "1,2", "--format", "json")
    assert "2 Python scripts or notebooks with GRPOConfig(...) not checked: --world-sizes takes YAML" in done.stderr
    assert "train.py" not in done.stdout and done.returncode == 0


@pytest.fixture
def two_configs(tmp_path: Path) -> Path:
    path = tmp_path / "two.py"
    path.write_text(
        "from transformers import AutoModelForCausalLM\n"
        'model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")\n' + TWO_CALLS
    )
    return path


def test_plan_judges_every_call_and_call_picks_one(two_configs):
    done = grpo("plan", two_configs, "--hardware", "1xH100-80GB", "--trl-version", "1.16.0", "--format", "json")
    files = json.loads(done.stdout)["files"]
    assert [
        (
            f["call"],
            f["call_line"],
            f["derived"]["per_device_train_batch_size"],
            f["derived"]["gradient_accumulation_steps"],
        )
        for f in files
    ] == [(1, 5, 4, 1), (2, 7, 8, 2)]
    assert done.returncode == 0
    text = grpo("plan", two_configs, "--hardware", "1xH100-80GB", "--trl-version", "1.16.0", "--call", "2")
    assert "(GRPOConfig call 2 of 2, line 7):" in text.stdout and "call 1 of 2" not in text.stdout
    wrong = grpo("plan", two_configs, "--hardware", "1xH100-80GB", "--call", "3")
    assert (
        wrong.returncode == 2
        and "--call 3: " in wrong.stderr
        and "has 2 GRPOConfig(...) calls (1: line 5, 2: line 7)" in wrong.stderr
    )


def test_plan_plans_the_calls_it_can_and_refuses_the_others_by_name(tmp_path):
    path = tmp_path / "mixed.py"
    path.write_text(
        TWO_CALLS.replace("max_completion_length=1024", "max_completion_length=int(input())").replace(
            "from trl",
            'import transformers\nm = transformers.AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")\nfrom trl',
        )
    )
    done = grpo("plan", path, "--hardware", "1xH100-80GB", "--trl-version", "1.16.0", "--format", "json")
    (planned,) = json.loads(done.stdout)["files"]
    assert planned["call"] == 1 and done.returncode == 2
    assert "call 2 (line 7) has values known only at run time: max_completion_length = int(input())" in done.stderr


def test_explain_and_doctor_take_every_call_or_the_one_named(two_configs):
    both = json.loads(grpo("explain", two_configs, "--trl-version", "1.16.0", "--format", "json").stdout)["calls"]
    assert [(c["call"], c["line"], c["derived"]["generation_batch_size"]) for c in both] == [(1, 5, 4), (2, 7, 16)]
    one = json.loads(grpo("explain", two_configs, "--call", "2", "--format", "json").stdout)
    assert (one["call"], one["derived"]["generation_batch_size"]) == (2, 16)
    text = grpo("explain", two_configs, "--trl-version", "1.16.0").stdout
    assert "GRPOConfig call 1 of 2, line 5:" in text and "GRPOConfig call 2 of 2, line 7:" in text
    doctor = json.loads(grpo("doctor", two_configs, "--trl-version", "1.16.0", "--format", "json").stdout)
    assert [c["call"] for c in doctor["calls"]] == ["call 1 of 2, line 5", "call 2 of 2, line 7"]
    assert grpo("doctor", two_configs, "--call", "5").returncode == 2
    yaml = two_configs.with_suffix(".yaml")
    yaml.write_text(YAML)
    refused = grpo("explain", yaml, "--call", "1")
    assert refused.returncode == 2 and "--call picks a GRPOConfig(...) call of a .py or .ipynb file" in refused.stderr


def test_a_transformers_key_the_release_reads_with_the_transformers_it_accepts_is_a_warning(tmp_path):
    """TRL 0.29 accepts transformers>=4.56.2; warmup_ratio is read up to transformers 5.14 (the table's 5.3, of
    0.29's date, reads it; 5.15 on, which 0.29 also accepts, do not): a warning naming both, the same code for the
    script and the YAML, never a TypeError verdict."""
    script = tmp_path / "train.py"
    script.write_text(
        "from trl import GRPOConfig\n\nWARMUP = 0.05\nargs = GRPOConfig(\n    output_dir='o',\n"
        "    warmup_ratio=WARMUP,\n    per_device_train_batch_size=4,\n    num_generations=4,\n)\n"
    )
    config = tmp_path / "run.yaml"
    config.write_text(YAML + "warmup_ratio: 0.05\n")
    found = {}
    for path in (script, config):
        done = grpo("validate", path, "--trl-version", "0.29.1", "--format", "json")
        (result,) = json.loads(done.stdout)["files"]
        (diag,) = [d for d in result["diagnostics"] if "warmup_ratio" in d["fields"]]
        found[path.suffix] = (diag["code"], diag["severity"], done.returncode)
        assert "transformers>=4.56.2" in diag["message"] and diag["fix"]["set"] == {"warmup_steps": 0.05}
    assert found == {".py": ("GRPO-K011", "warning", 0), ".yaml": ("GRPO-K011", "warning", 0)}
    # TRL 1.16 is judged with its own transformers (5.23), which has no warmup_ratio: still the removed key there.
    assert (
        json.loads(grpo("validate", script, "--trl-version", "1.16.0", "--format", "json").stdout)["files"][0][
            "diagnostics"
        ][0]["code"]
        == "GRPO-K003"
    )


def test_a_transformers_key_added_inside_the_range_the_release_accepts_is_a_warning(tmp_path):
    """TRL 0.23 accepts transformers>=4.56.1; project and trackio_space_id are TrainingArguments fields of
    transformers 4.57 (the 0.23 table's 4.56.2 has neither): read when 4.57 is installed, so not a TypeError verdict."""
    script = tmp_path / "train.py"
    script.write_text(
        "from trl import GRPOConfig\n\nargs = GRPOConfig(output_dir='o', report_to='trackio', "
        "project='grpo', trackio_space_id='me/grpo')\n"
    )
    done = grpo("validate", script, "--trl-version", "0.23.1", "--format", "json")
    (result,) = json.loads(done.stdout)["files"]
    assert [(d["code"], d["severity"], d["fields"]) for d in result["diagnostics"] if d["code"] == "GRPO-K011"] == [
        ("GRPO-K011", "warning", ["project"]),
        ("GRPO-K011", "warning", ["trackio_space_id"]),
    ]
    assert done.returncode == 0
    # A key no transformers that TRL 0.23 accepts has (a TRL field of later releases) is still K009.
    script.write_text("from trl import GRPOConfig\n\nargs = GRPOConfig(output_dir='o', vllm_max_model_length=4096)\n")
    later = json.loads(grpo("validate", script, "--trl-version", "0.23.1", "--format", "json").stdout)["files"][0]
    assert [d["code"] for d in later["diagnostics"] if d["severity"] == "error"] == ["GRPO-K009"]


def test_unsloths_trl_range_comes_before_the_installed_trl(tmp_path, monkeypatch):
    """A notebook that imports unsloth and pins no trl runs where Unsloth installs it, not in this environment."""
    from grpo_schema.dialects.python import check_python

    text = "import unsloth\nfrom trl import GRPOConfig\nc = GRPOConfig(output_dir='o')\n"
    result = check_python(text, "nb.py", trl_version="1.16.0", trl_version_source="installed").results[0]
    assert result.trl_version_source.startswith("the trl range unsloth requires")

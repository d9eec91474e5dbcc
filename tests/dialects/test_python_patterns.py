"""Patterns met in real scripts and notebooks outside the corpus, each in a small file written here: a PEP 723
`# /// script` header that pins trl, a marimo notebook whose cells pass names to each other, a GRPOConfig that is
the project's own class, an evaluation batch known only at run time beside a literal training batch, and the
notebook idioms (magics, values from earlier cells, **dict, f-strings, PatchFastRL)."""

from __future__ import annotations

import json

from grpo_schema.dialects.python import check_python


def check(text: str, name: str = "train.py", **options):
    options.setdefault("trl_version", "1.16.0")
    options.setdefault("trl_version_source", "default")
    return check_python(text, name, **options)


def codes(result, severity=None):
    return sorted(d.code for d in result.diagnostics if severity is None or d.severity == severity)


SCRIPT_HEADER = """# /// script
# requires-python = ">=3.10"
# dependencies = [
#     "unsloth",
#     "trl==0.26.2",
# ]
# ///
from unsloth import FastLanguageModel
from trl import GRPOConfig

args = GRPOConfig(output_dir="o", per_device_train_batch_size=4, num_generations=4)
"""


def test_a_pep_723_header_pins_the_release_the_script_runs_with():
    result = check(SCRIPT_HEADER).results[0]
    assert (result.trl_version, result.trl_version_source) == ("0.26.2", "the file's install line: trl==0.26.2")


MARIMO = """import marimo

app = marimo.App()


@app.cell
def _():
    max_seq_length = 2048
    max_prompt_length = 512
    generations = 4
    _scratch = 1
    return generations, max_prompt_length, max_seq_length


@app.cell
def _(generations, max_prompt_length, max_seq_length):
    from trl import GRPOConfig

    training_args = GRPOConfig(
        output_dir="outputs",
        per_device_train_batch_size=1,
        gradient_accumulation_steps=2,
        num_generations=generations,
        max_completion_length=max_seq_length - max_prompt_length,
    )
    return (training_args,)


@app.cell
def _(_scratch):
    return


if __name__ == "__main__":
    app.run()
"""


def test_a_marimo_notebooks_cells_pass_their_names_to_the_cell_that_builds_the_config():
    checked = check(MARIMO, "notebook.py")
    (call,) = checked.calls
    assert call.mapping["max_completion_length"] == 1536 and call.mapping["num_generations"] == 4
    assert not call.unknown
    result = checked.results[0]
    assert codes(result, "error") == ["GRPO-B001"]  # 1 x 1 x 2 = 2 is not a multiple of 4
    assert result.diagnostics[0].line == 23  # at num_generations, in the file's own numbering


def test_a_cell_parameter_no_cell_defines_stays_unknown():
    text = MARIMO.replace("    generations = 4\n", "").replace("return generations, ", "return ")
    (call,) = check(text, "notebook.py").calls
    assert "num_generations" in call.unknown and "parameter of _()" in call.unknown["num_generations"].why


def test_a_grpoconfig_of_the_projects_own_is_not_judged_as_trls():
    own_class = """from dataclasses import dataclass


@dataclass
class GRPOConfig:
    batch_size: int = 8
    group_size: int = 4


config = GRPOConfig(batch_size=3, group_size=4)
"""
    other_module = "from grpo_trainer import GRPOConfig\n\nconfig = GRPOConfig(batch_size=3, group_size=4)\n"
    relative = "from .configs import GRPOConfig\n\nconfig = GRPOConfig(batch_size=3, group_size=4)\n"
    for text in (own_class, other_module, relative):
        checked = check(text)
        assert checked.calls == [] and codes(checked.results[0]) == ["GRPO-F002"], text
    # TRL's own, beside the project's: the TRL one is judged
    both = (
        "import trl\nfrom my_rl import GRPOConfig\n\na = GRPOConfig(batch_size=3)\nb = trl.GRPOConfig("
        "output_dir='o', per_device_train_batch_size=3, num_generations=4)\n"
    )
    (call,) = check(both).calls
    assert call.line == 5


def test_an_evaluation_batch_known_at_run_time_leaves_the_training_batch_judged():
    text = """import argparse
from trl import GRPOConfig

args = argparse.ArgumentParser().parse_args()
config = GRPOConfig(
    output_dir="o",
    per_device_train_batch_size=1,
    gradient_accumulation_steps=4,
    num_generations=8,
    eval_strategy="steps",
    per_device_eval_batch_size=args.eval_batch_size,
)
"""
    plain = check(text, trl_version="0.15.2", trl_version_source="flag").results[0]
    assert codes(plain, "error") == ["GRPO-B001"]  # 1 process x 1 is not a multiple of 8, whatever the eval batch
    assert "per_device_eval_batch_size" in {f for d in plain.diagnostics if d.code == "GRPO-F003" for f in d.fields}
    unsloth = check(
        "from unsloth import FastLanguageModel, PatchFastRL\nPatchFastRL('GRPO', FastLanguageModel)\n" + text,
        trl_version="0.15.2",
        trl_version_source="flag",
    ).results[0]
    rewrite = next(d for d in unsloth.diagnostics if d.code == "GRPO-B001")
    assert unsloth.valid and rewrite.severity == "warning" and "Unsloth replaces" in rewrite.message


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
        }
    )


def test_notebook_idioms_magics_earlier_cells_dicts_and_fstrings():
    text = notebook(
        "%%capture\n!pip install unsloth vllm\n%pip install --no-deps trl==0.22.2",
        "from unsloth import FastLanguageModel, PatchFastRL\nPatchFastRL('GRPO', FastLanguageModel)",
        "MODEL = 'qwen'\nmax_seq_length = 1024\nmax_prompt_length = 256\n"
        "common = dict(logging_steps=1, report_to='none')",
        "from trl import GRPOConfig\ntraining_args = GRPOConfig(\n    output_dir=f'outputs/{MODEL}',\n"
        "    per_device_train_batch_size=1,\n    num_generations=6,\n"
        "    max_completion_length=max_seq_length - max_prompt_length,\n    **common,\n)",
        "training_args.learning_rate  # inspecting it afterwards changes nothing",
    )
    checked = check(text, "nb.ipynb")
    (call,) = checked.calls
    assert (call.cell, call.line) == (3, 2)
    assert call.mapping == {
        "output_dir": "outputs/qwen",
        "per_device_train_batch_size": 1,
        "num_generations": 6,
        "max_completion_length": 768,
        "logging_steps": 1,
        "report_to": "none",
    }
    result = checked.results[0]
    assert (result.trl_version, checked.unsloth) == ("0.22.2", True)
    assert result.plan.per_device_train_batch_size == 6  # Unsloth's rewrite, said as a warning


def test_unsloth_imported_by_another_module_of_the_repository(tmp_path):
    """The entry script imports unsloth, the module that builds the config only trl: the repository's
    requirements say so beside the batch error, and --profile unsloth judges it as Unsloth runs it."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("unsloth\ntrl\n")
    (tmp_path / "training").mkdir()
    path = tmp_path / "training" / "train.py"
    path.write_text(
        "from trl import GRPOConfig\n\n\ndef train():\n    return GRPOConfig(output_dir='o', "
        "per_device_train_batch_size=1, num_generations=4)\n"
    )
    plain = check_python(path.read_bytes(), str(path), trl_version="0.19.1", trl_version_source="flag").results[0]
    assert codes(plain) == ["GRPO-B001", "GRPO-F008"] and "installs unsloth" in plain.diagnostics[-1].message
    profiled = check_python(
        path.read_bytes(), str(path), trl_version="0.19.1", trl_version_source="flag", profiles=("unsloth",)
    )
    result = profiled.results[0]
    assert result.valid and profiled.unsloth and result.plan.per_device_train_batch_size == 4
    (tmp_path / "requirements.txt").write_text("trl\n")
    alone = check_python(path.read_bytes(), str(path), trl_version="0.19.1", trl_version_source="flag").results[0]
    assert codes(alone) == ["GRPO-B001"]


ARGPARSE = """import argparse

from trl import GRPOConfig

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=3)
parser.add_argument("--num_generations", type=int, default=4)
parser.add_argument("--lr", type=float, default=5e-6)
parser.add_argument("--no-vllm", action="store_false", dest="use_vllm")
args = parser.parse_args()
generations = args.num_generations

config = GRPOConfig(
    output_dir="out",
    per_device_train_batch_size=args.batch_size,
    num_generations=generations,
    learning_rate=args.lr * 2,
    use_vllm=args.use_vllm,
    bf16=not args.use_vllm,
)
"""


def test_argparse_defaults_are_said_and_judged_as_an_information_never_as_the_verdict():
    checked = check(ARGPARSE)
    (call,) = checked.calls
    assert set(call.unknown) == {"per_device_train_batch_size", "num_generations", "learning_rate", "use_vllm", "bf16"}
    assert call.defaults == {
        "per_device_train_batch_size": ("--batch-size", 3),
        "num_generations": ("--num_generations", 4),
        "use_vllm": ("--no-vllm", True),
    }
    result = checked.results[0]
    assert result.valid  # the run may pass anything: nothing is guessed for the verdict
    batch = next(d for d in result.diagnostics if d.code == "GRPO-F003" and d.fields == ("num_generations",))
    assert "the script's parser gives 4 when --num_generations is not passed" in batch.message
    (defaults,) = [d for d in result.diagnostics if d.code == "GRPO-F011"]
    assert defaults.severity == "info" and "per_device_train_batch_size=3" in defaults.message
    assert "GRPO-B001" in defaults.message  # 3 x 1 x 1 is not a multiple of 4
    assert "bf16, learning_rate still unknown" in defaults.message  # computed from the option: not substituted
    fixed = check(ARGPARSE.replace("default=3", "default=8")).results[0]
    assert "valid at world size 1" in next(d for d in fixed.diagnostics if d.code == "GRPO-F011").message


def test_an_option_two_parsers_declare_differently_has_no_default():
    text = ARGPARSE.replace(
        'parser.add_argument("--lr"',
        "other = argparse.ArgumentParser()\n"
        'other.add_argument("--num_generations", type=int, default=8)\nparser.add_argument("--lr"',
    )
    (call,) = check(text).calls
    assert "num_generations" not in call.defaults and "per_device_train_batch_size" in call.defaults


def test_the_defaults_are_judged_as_unsloth_runs_them():
    result = check("import unsloth\n" + ARGPARSE, trl_version="0.22.2", trl_version_source="flag").results[0]
    (defaults,) = [d for d in result.diagnostics if d.code == "GRPO-F011"]
    assert ": valid at world size 1" in defaults.message  # Unsloth trains the 3 as 4: no error with the defaults


def test_the_defaults_of_a_dataclass_given_to_trlparser():
    text = """from dataclasses import dataclass, field

from trl import GRPOConfig, TrlParser


@dataclass
class RunArguments:
    group: int = 8
    batch: int = field(default=6, metadata={"help": "prompts per device"})
    name: str = field(default_factory=lambda: "run")


def main():
    (run_args,) = TrlParser((RunArguments,)).parse_args_and_config()
    return GRPOConfig(output_dir="o", num_generations=run_args.group, per_device_train_batch_size=run_args.batch)
"""
    (call,) = check(text).calls
    assert call.defaults == {"num_generations": ("--group", 8), "per_device_train_batch_size": ("--batch", 6)}
    result = check(text).results[0]
    assert "GRPO-B001" in next(d for d in result.diagnostics if d.code == "GRPO-F011").message  # 6 vs 8


def test_a_fix_for_a_value_known_at_run_time_renames_the_keyword_and_json_carries_it(tmp_path, capsys):
    """warmup_ratio=args.warmup_ratio at TRL 1.16 (removed key): the fix moves the expression to warmup_steps by a
    rename; no value known only at run time reaches a fix (the JSON output once failed on it)."""
    from grpo_schema.cli import main

    path = tmp_path / "train.py"
    path.write_text(ARGPARSE.replace("    bf16=not args.use_vllm,\n", "    warmup_ratio=args.lr,\n"))
    assert main(["validate", str(path), "--trl-version", "1.16.0", "--format", "json"]) == 1
    (result,) = json.loads(capsys.readouterr().out)["files"]
    (removed,) = [d for d in result["diagnostics"] if d["code"] == "GRPO-K003"]
    assert removed["fix"]["rename"] == {"warmup_ratio": "warmup_steps"} and removed["fix"]["set"] == {}


def test_a_script_is_judged_at_its_repositorys_lock_before_the_installed_trl(tmp_path):
    """A repository whose pyproject says trl>=0.16 and whose uv.lock resolved 0.29.0: the script runs with 0.29.0,
    whatever trl the checking environment has installed."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["trl[vllm]>=0.16.0"]\n')
    (tmp_path / "uv.lock").write_text(
        'version = 1\n\n[[package]]\nname = "transformers"\nversion = "5.3.0"\n\n'
        '[[package]]\nname = "trl"\nversion = "0.29.0"\nsource = { registry = '
        '"https://pypi.org/simple" }\n'
    )
    path = tmp_path / "train.py"
    path.write_text("from trl import GRPOConfig\nargs = GRPOConfig(output_dir='o', warmup_ratio=0.1)\n")
    result = check_python(path.read_bytes(), str(path), trl_version="1.16.0", trl_version_source="installed")
    judged = result.results[0]
    assert (judged.trl_version, judged.trl_version_source) == ("0.29.0", "requirements")
    assert codes(judged, "warning") == ["GRPO-K011"]  # read by the transformers 5.3 the lock resolved

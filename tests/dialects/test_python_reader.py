"""GRPOConfig(...) in Python scripts and notebooks (grpo_schema.dialects.python), on the repository's own small
files (tests/dialects/python_files): calls, values, positions, unknowns, bad input, and the same codes as the
equivalent YAML."""

from __future__ import annotations

from pathlib import Path

import pytest

from grpo_schema.dialects.python import check_python
from grpo_schema.engine.check import check_text

FILES = Path(__file__).parent / "python_files"


def checked(name: str, **options):
    options.setdefault("trl_version", "1.16.0")
    options.setdefault("trl_version_source", "flag")
    return check_python((FILES / name).read_bytes(), str(FILES / name), **options)


def codes(result, severity=None) -> list[str]:
    return sorted(d.code for d in result.diagnostics if severity is None or d.severity == severity)


def at(result, code: str):
    return next(d for d in result.diagnostics if d.code == code)


def test_every_call_is_read_with_its_values_through_aliases_modules_constants_and_dicts():
    check = checked("aliases.py")
    assert [(c.call.callee, c.line) for c in check.calls] == [("Config", 10), ("trl.GRPOConfig", 20)]
    assert check.calls[0].mapping == {
        "output_dir": "out-a",
        "per_device_train_batch_size": 4,
        "gradient_accumulation_steps": 2,
        "num_generations": 8,
        "max_completion_length": 768,
        "learning_rate": 5e-6,
        "logging_steps": 5,
        "report_to": "none",
    }
    assert check.calls[1].mapping == {"output_dir": "out-b", "num_generations": 3, "per_device_train_batch_size": 4}
    first, second = check.results
    assert first.valid and first.plan.per_device_train_batch_size == 4
    # Each call judged on its own: the second's batch (4 vs 3) is its own error, at the dict key that sets it.
    assert not second.valid and codes(second, "error") == ["GRPO-B001"]
    assert (at(second, "GRPO-B001").line, at(second, "GRPO-B001").column) == (20, 37)
    assert (first.positions.keys[("num_generations",)]) == (14, 5)


def test_values_known_only_at_run_time_are_unknown_never_a_default():
    check = checked("runtime_values.py")
    (result,) = check.results
    unknown = at(result, "GRPO-F003")
    assert unknown.line == 15 and unknown.fields == ("learning_rate",)
    assert "args.lr" in unknown.message and "cannot judge statically" in unknown.message
    opaque = at(result, "GRPO-F004")
    assert opaque.line == 17 and "**extra" in opaque.message and "read from a file" in opaque.message
    # Whatever **extra sets may be the batch: no schedule is derived from defaults.
    assert result.plan is None and "GRPO-B001" not in codes(result)


def test_bad_input_gets_a_diagnostic_never_a_traceback():
    broken = 'from trl import GRPOConfig\n\nconfig = GRPOConfig(output_dir="out", num_generations=4\n'
    (result,) = check_python(broken, "broken.py").results
    assert codes(result) == ["GRPO-F001"] and at(result, "GRPO-F001").line == 3
    check = checked("subclass.py")
    assert [c.call.callee for c in check.calls] == ["GRPOConfig"]  # MyConfig(...) is not guessed at
    assert {"GRPO-F005", "GRPO-F003"} <= set(codes(check.results[0]))
    assert at(check.results[0], "GRPO-F005").line == 7
    deep = b"GRPOConfig(" + b"[" * 200_000  # nesting past what the parser takes
    for data in (
        b"",
        b"GRPOConfig(\xff\xfe garbage (",
        b"{not json GRPOConfig",
        b'{"cells": 3, "GRPOConfig": 1}',
        deep,
        b"GRPOConfig(" + b"x = (" * 5000,
        b"\x00GRPOConfig()",
    ):
        for name in ("x.py", "x.ipynb"):
            result = check_python(data, name).results[0]
            assert result.diagnostics and all(d.code.startswith("GRPO-F") for d in result.diagnostics)
    huge = b'{"cells": [{"cell_type": "code", "source": "GRPOConfig()", "outputs": ["' + b"x" * 6_000_000 + b'"]}]}'
    (result,) = check_python(huge, "big.ipynb").results
    assert codes(result) == ["GRPO-F001"] and "more than the 5,000,000 read" in result.diagnostics[0].message


def test_a_notebook_is_read_cell_by_cell_with_its_install_line_as_the_release():
    check = check_python((FILES / "notebook.ipynb").read_bytes(), "nb.ipynb")
    by_path = {r.path: r for r in check.results}
    call = by_path["nb.ipynb[cell 5]"]
    assert call.trl_version == "0.19.1" and "install line" in call.trl_version_source
    assert check.calls[0].mapping["max_completion_length"] == 768  # constants from an earlier cell
    assert check.calls[0].mapping["seed"] == 3407
    assert (at(call, "GRPO-B001").line, at(call, "GRPO-B001").column) == (5, 5)  # cell 5, line 5
    broken = by_path["nb.ipynb[cell 4]"]  # the broken cell is named, the others still read
    assert codes(broken) == ["GRPO-F001"] and at(broken, "GRPO-F001").line == 1


def test_unsloth_rewrites_the_batch_and_says_so_with_the_code_the_yaml_gets():
    (plain,) = checked("plain_batch.py", trl_version="0.22.2").results
    (unsloth,) = checked("unsloth_batch.py", trl_version="0.22.2").results
    yaml = check_text(
        "output_dir: outputs\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 1\nnum_generations: 4\n",
        trl_version="0.22.2",
    )
    assert "GRPO-B001" in codes(yaml, "error") and codes(plain, "error") == ["GRPO-B001"]
    rewrite = at(unsloth, "GRPO-B001")
    assert unsloth.valid and rewrite.severity == "warning" and rewrite.line == 6
    assert "Unsloth replaces per_device_train_batch_size=1 by num_generations=4" in rewrite.message
    assert unsloth.plan.per_device_train_batch_size == 4  # what the run really trains with
    assert unsloth.sources["per_device_train_batch_size"] == "Unsloth's rewrite"
    assert unsloth.profile_args["unsloth"].unsloth_num_chunks == 2  # Unsloth's own key, typed


def test_unsloth_without_a_pin_is_judged_at_its_trl_range():
    check = check_python(
        (FILES / "unsloth_batch.py").read_bytes(), "u.py", trl_version="1.16.0", trl_version_source="default"
    )
    assert check.results[0].trl_version.startswith("0.24") and "unsloth" in check.results[0].trl_version_source


@pytest.mark.parametrize(
    "release,key,code",
    [
        ("1.16.0", "max_prompt_length", "GRPO-K003"),  # removed in 0.28
        ("0.22.2", "vllm_importance_sampling_correction", "GRPO-K009"),  # not yet in 0.22
    ],
)
def test_a_key_gives_the_code_the_equivalent_yaml_gets_and_an_error_for_the_constructor(release, key, code):
    (result,) = checked("keys.py", trl_version=release).results
    yaml = check_text(
        "output_dir: outputs\nmax_prompt_length: 512\nper_device_train_batch_size: 4\n"
        "num_generations: 4\nvllm_importance_sampling_correction: true\n",
        trl_version=release,
    )
    found = [d for d in result.diagnostics if d.fields[:1] == (key,)]
    assert [d.code for d in found] == [d.code for d in yaml.diagnostics if d.fields[:1] == (key,)] == [code]
    assert found[0].severity == "error"  # GRPOConfig(...) raises TypeError where `trl grpo` may only warn
    script_key = at(result, "GRPO-F007")
    assert script_key.fields == ("model_name_or_path",) and script_key.line == 9


def test_validate_reports_python_files_in_every_format(capsys):
    from grpo_schema.cli import main

    path = str(FILES / "plain_batch.py")
    assert main(["validate", path, "--trl-version", "0.22.2"]) == 1
    text = capsys.readouterr().out
    assert f"{path}:7:5: error[GRPO-B001]" in text and "    num_generations=4," in text
    assert main(["validate", path, "--trl-version", "0.22.2", "--format", "github"]) == 1
    assert f"::error file={path},line=7,col=5,title=GRPO-B001::" in capsys.readouterr().out
    import json

    assert main(["validate", str(FILES / "notebook.ipynb"), "--format", "sarif"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    # SARIF names the notebook file and the line of the .ipynb that holds the cell's line; the message the cell.
    found = {
        r["message"]["text"].split(":")[0]: r["locations"][0]["physicalLocation"] for r in sarif["runs"][0]["results"]
    }
    assert found["cell 5 line 5"]["artifactLocation"]["uri"].endswith("python_files/notebook.ipynb")
    ipynb = (FILES / "notebook.ipynb").read_text().split("\n")
    assert "num_generations=8" in ipynb[found["cell 5 line 5"]["region"]["startLine"] - 1]
    assert "def broken(" in ipynb[found["cell 4 line 1"]["region"]["startLine"] - 1]
    assert main(["validate", str(FILES / "aliases.py"), "--format", "json", "--trl-version", "0.22.2"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [r["valid"] for r in document["files"]] == [True, False]


COMPARED = ("plain_batch.py", "unsloth_batch.py", "keys.py", "aliases.py", "notebook.ipynb", "runtime_values.py")


@pytest.mark.parametrize("name", COMPARED)
def test_export_gives_yaml_on_which_validate_finds_the_same_codes(name, tmp_path, capsys):
    from grpo_schema.cli import main

    path = FILES / name
    check = checked(name, trl_version="0.22.2")
    for index, result in enumerate(check.results[: len(check.calls)]):
        out = tmp_path / f"call{index}.yaml"
        assert main(["export", str(path), "--call", str(index + 1), "-o", str(out), "--trl-version", "0.22.2"]) == 0
        text = out.read_text()
        yaml_result = check_text(text, path=str(out))
        assert yaml_result.trl_version == "0.22.2"  # from the exported `# grpo:` comment
        python_only = ("GRPO-F", "GRPO-S006")
        same = lambda r, skip=python_only: sorted(  # noqa: E731
            d.code for d in r.diagnostics if not d.code.startswith(skip)
        )
        if name == "keys.py":  # the script's own key is left out of the YAML, in a comment saying why
            assert "# model_name_or_path is an argument of the `trl grpo` script" in text
        if name == "unsloth_batch.py":  # TRL alone refuses what Unsloth rewrites: the same code, an error
            assert [d.severity for d in yaml_result.diagnostics if d.code == "GRPO-B001"] == ["error"]
        if name == "runtime_values.py":  # unknowns said, never invented
            assert "# learning_rate:   # = args.lr" in text and "learning_rate" not in yaml_result.raw
            continue
        assert same(yaml_result) == same(result), text
    capsys.readouterr()


def test_explain_shows_the_batch_unsloth_really_trains_with(capsys):
    from grpo_schema.cli import main

    assert main(["explain", str(FILES / "unsloth_batch.py"), "--trl-version", "0.22.2", "--format", "json"]) == 0
    import json

    document = json.loads(capsys.readouterr().out)
    assert document["derived"]["per_device_train_batch_size"] == 4
    assert document["notes"][0].startswith("Unsloth trains with per_device_train_batch_size=4, not the 1 written")
    assert main(["explain", str(FILES / "aliases.py"), "--trl-version", "0.22.2", "--format", "json"]) == 1
    calls = json.loads(capsys.readouterr().out)["calls"]
    assert [c["valid"] for c in calls] == [True, False] and calls[0]["derived"]["num_generations"] == 8


MIGRATED = """from trl import GRPOConfig

EXTRA = {"max_prompt_length": 512, "report_to": "none"}
args = GRPOConfig(
    output_dir="out",  # where to save
    max_prompt_length=256,  # the prompt budget
    warmup_ratio=0.1,
    num_generations=4, per_device_train_batch_size=4, vllm_device="cuda:1",
    **EXTRA,
)
"""


def test_migrate_rewrites_each_keyword_where_it_is_written_keeping_the_rest(tmp_path, capsys):
    from grpo_schema.cli import main

    path = tmp_path / "train.py"
    path.write_text(MIGRATED)
    assert main(["migrate", str(path)]) == 1 and path.read_text() == MIGRATED  # a diff, nothing written
    assert "+    warmup_steps=0.1," in capsys.readouterr().out
    assert main(["migrate", str(path), "--write"]) == 0
    assert path.read_text() == MIGRATED.replace('"max_prompt_length": 512, ', "").replace(
        "    max_prompt_length=256,  # the prompt budget",
        "    # grpo migrate removed (no longer read by the target "
        "TRL release): max_prompt_length=256,  # the prompt budget",
    ).replace("warmup_ratio=0.1", "warmup_steps=0.1").replace(', vllm_device="cuda:1",', ",")
    capsys.readouterr()
    assert main(["validate", str(path)]) == 0  # nothing left to migrate, and valid
    capsys.readouterr()


def test_migrate_edits_a_notebook_cell_and_leaves_the_json_as_jupyter_wrote_it(tmp_path, capsys):
    import json

    from grpo_schema.cli import main

    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": [
                "from trl import GRPOConfig\n",
                "args = GRPOConfig(output_dir='o', max_prompt_length=64,\n",
                "                  num_generations=4, per_device_train_batch_size=4)",
            ],
        }
    ]
    original = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    path = tmp_path / "nb.ipynb"
    path.write_text(original)
    assert main(["migrate", str(path), "--write"]) == 0
    new = path.read_text()
    assert json.loads(new)["cells"][0]["source"][1] == "args = GRPOConfig(output_dir='o',\n"
    assert [line for line in new.split("\n") if line not in original.split("\n")] == [
        "    \"args = GRPOConfig(output_dir='o',\\n\","
    ]
    capsys.readouterr()


def test_plan_reads_the_call_with_the_batch_and_model_it_trains_with(capsys):
    import json

    from grpo_schema.cli import main

    path = str(FILES / "unsloth_batch.py")
    assert main(["plan", path, "--hardware", "1xH100-80GB", "--trl-version", "0.22.2", "--format", "json"]) == 0
    (document,) = json.loads(capsys.readouterr().out)["files"]
    assert document["derived"]["per_device_train_batch_size"] == 4  # Unsloth's rewrite, not the 1 written
    assert document["model"]["name"] == "Qwen2.5-0.5B"  # from_pretrained(model_name=...) in the file
    assert main(["plan", str(FILES / "runtime_values.py"), "--hardware", "1xH100-80GB"]) == 2
    assert "values known only at run time: learning_rate = args.lr" in capsys.readouterr().err


def test_doctor_judges_the_environment_against_the_release_the_notebook_installs(tmp_path, capsys):
    import json

    from grpo_schema.cli import main

    notebook = tmp_path / "notebook.ipynb"  # outside this repository, whose own pyproject pins trl
    notebook.write_bytes((FILES / "notebook.ipynb").read_bytes())
    main(["doctor", str(notebook), "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert (document["file_trl_version"], document["file_trl_version_source"]) == (
        "0.19.1",
        "the file's install line: trl==0.19.1",
    )


def test_the_pre_commit_hook_for_python_and_notebooks_fails_on_errors_only(tmp_path, capsys):
    import shlex

    import yaml

    from grpo_schema.cli import main
    from tests.conftest import REPO

    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    hook = hooks["grpo-validate-python"]
    assert hook["types_or"] == ["python", "jupyter"]
    command = shlex.split(hook["entry"])[1:]
    other = tmp_path / "utils.py"
    other.write_text("def f(:\n")  # no GRPOConfig in it: not even parsed
    assert main([*command, str(other), str(FILES / "aliases.py")]) == 1  # aliases.py's second call
    assert "aliases.py:20:37: error[GRPO-B001]" in capsys.readouterr().out
    assert main([*command, str(other), str(FILES / "unsloth_batch.py"), "--trl-version", "0.22.2"]) == 0
    capsys.readouterr()


def test_newer_syntax_and_shell_continuations_leave_only_their_lines_out():
    script = (
        'from trl import GRPOConfig\nd = {"q": 1}\nprompt = (\n    f"{d["q"]} and more"\n)\n'
        'args = GRPOConfig(output_dir="o", num_generations=4, per_device_train_batch_size=4)\n'
    )
    check = check_python(script, "new.py", trl_version="1.16.0", trl_version_source="flag")
    (result,) = check.results
    assert [c.line for c in check.calls] == [6] and result.valid
    newer = at(result, "GRPO-F009")
    assert newer.severity == "warning" and newer.line == 4
    import json

    cell = [
        "import os\n",
        "if True:\n",
        "    !uv pip install -qqq \\\n",
        "        unsloth vllm \\\n",
        "        trl==0.22.2\n",
        "from trl import GRPOConfig\n",
        "args = GRPOConfig(output_dir='o')\n",
    ]
    notebook = json.dumps(
        {
            "cells": [{"cell_type": "code", "source": cell, "metadata": {}, "outputs": []}],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )
    check = check_python(notebook, "nb.ipynb")
    assert [(c.cell, c.line) for c in check.calls] == [(0, 7)] and codes(check.results[0]) == []
    assert check.results[0].trl_version == "0.22.2"  # from the continued install line


def test_an_unsloth_of_the_trl_015_era_rewrote_on_per_device_train_batch_size_alone():
    script = (
        "from unsloth import FastLanguageModel\nfrom trl import GRPOConfig\n"
        "args = GRPOConfig(output_dir='o', per_device_train_batch_size=1, gradient_accumulation_steps=4, "
        "num_generations=4)\n"
    )
    (old,) = check_python(script, "u.py", trl_version="0.15.2", trl_version_source="flag").results
    rewrite = at(old, "GRPO-B001")
    assert old.valid and "looked at it alone" in rewrite.message and old.plan.per_device_train_batch_size == 4
    (current,) = check_python(script, "u.py", trl_version="0.22.2", trl_version_source="flag").results
    assert current.valid and current.plan.per_device_train_batch_size == 1  # 4 x 1 x 1 divides: left alone


def test_rules_about_the_reward_functions_are_not_judged_from_the_scripts_defaults():
    script = "from trl import GRPOConfig\nargs = GRPOConfig(output_dir='o', reward_weights=[1.0, 2.0])\n"
    (result,) = check_python(script, "w.py", trl_version="1.16.0", trl_version_source="flag").results
    assert result.valid and "GRPO-R001" not in codes(result)  # the functions are GRPOTrainer's argument


def test_options_that_take_a_yaml_config_are_refused_for_a_python_file_with_the_way_to_do_it(capsys):
    from grpo_schema.cli import main

    for option in (["--fix"], ["--hardware", "1xH100-80GB"], ["--world-sizes", "1-8"]):
        assert main(["validate", str(FILES / "keys.py"), *option]) == 2
        said = capsys.readouterr().err
        assert ("grpo migrate" if option == ["--fix"] else "grpo export") in said


def test_columns_count_characters_not_bytes():
    script = (
        'from trl import GRPOConfig\nc = GRPOConfig(run_name="é€", num_generations=3, per_device_train_batch_size=4)\n'
    )
    (result,) = check_python(script, "u.py", trl_version="1.16.0", trl_version_source="flag").results
    b001 = at(result, "GRPO-B001")
    assert script.split("\n")[1][b001.column - 1 :].startswith("num_generations")


def test_unsloths_rewrite_is_said_on_its_own_where_trl_alone_has_no_batch_error():
    script = (
        "# !pip install unsloth==2025.6.1 trl==0.19.1\nfrom unsloth import FastLanguageModel\n"
        "from trl import GRPOConfig\nargs = GRPOConfig(output_dir='o', per_device_train_batch_size=1,\n"
        "                  gradient_accumulation_steps=4, num_generations=4)\n"
    )
    (result,) = check_python(script, "u.py").results
    assert result.trl_version == "0.19.1" and codes(result) == ["GRPO-F010"]
    assert at(result, "GRPO-F010").line == 4 and result.plan.per_device_train_batch_size == 4

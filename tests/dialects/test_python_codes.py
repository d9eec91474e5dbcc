"""The Python reader's notes and errors on small scripts: no call to judge (GRPO-F002), a keyword given twice
(GRPO-F006), and what Unsloth's config class may rewrite (GRPO-F008)."""

from __future__ import annotations

from grpo_schema.dialects.python import check_python

UNSLOTH = "from unsloth import FastLanguageModel\nfrom trl import GRPOConfig\nimport os\n"


def diagnostics(source: str) -> list:
    checked = check_python(source.encode(), "train.py", trl_version="1.16.0", trl_version_source="flag")
    return [d for result in checked.results for d in result.diagnostics]


def test_a_script_without_a_config_call_says_there_is_nothing_to_judge():
    [diag] = diagnostics("import torch\nprint('no config here')\n")
    assert (diag.code, diag.severity, diag.line) == ("GRPO-F002", "info", 1)
    assert "no GRPOConfig(...) call" in diag.message


def test_a_keyword_given_again_in_a_spread_dict_is_the_type_error_python_raises():
    found = diagnostics(
        "from trl import GRPOConfig\n"
        "config = GRPOConfig(output_dir='out', learning_rate=1e-6, **{'learning_rate': 2e-6})\n"
    )
    [diag] = [d for d in found if d.code == "GRPO-F006"]
    assert diag.severity == "error" and diag.fields == ("learning_rate",) and diag.line == 2
    assert "given twice" in diag.message and "TypeError" in diag.message


def test_dapo_under_unsloth_names_the_values_its_config_class_may_set():
    found = diagnostics(
        UNSLOTH + "args = GRPOConfig(output_dir='o', loss_type='dapo', num_generations=4, "
        "per_device_train_batch_size=4)\n"
    )
    [diag] = [d for d in found if d.code == "GRPO-F008"]
    assert diag.fields == ("loss_type",) and (diag.line, diag.column) == (4, 35)
    assert "epsilon_high and mask_truncated_completions" in diag.message and "epsilon_high" in diag.hint


def test_a_batch_known_only_at_run_time_under_unsloth_cannot_be_judged():
    found = diagnostics(
        UNSLOTH + "args = GRPOConfig(output_dir='o', num_generations=4, "
        "per_device_train_batch_size=int(os.environ['B']))\n"
    )
    assert [d.code for d in found if d.fields == ("per_device_train_batch_size",)] == ["GRPO-F008", "GRPO-F003"]
    assert "cannot be judged statically" in found[0].message

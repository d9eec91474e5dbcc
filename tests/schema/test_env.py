"""The env: section: strings only, no process hijacking, no secrets, never applied by validation."""

from __future__ import annotations

import os

from tests.schema.helpers import check, only


def codes(result):
    return [d.code for d in result.diagnostics if d.code.startswith("GRPO-E")]


def test_plain_variables_pass_and_are_returned():
    result = check("env:\n  WANDB_PROJECT: grpo\n  NCCL_DEBUG: INFO\n")
    assert result.env == {"WANDB_PROJECT": "grpo", "NCCL_DEBUG": "INFO"} and result.valid


def test_validation_never_applies_env():
    name = "GRPO_CONFIG_TEST_VARIABLE"
    os.environ.pop(name, None)
    check(f"env:\n  {name}: set\n")
    assert name not in os.environ


def test_hijacking_and_secrets_are_refused_unless_allowed():
    text = "env:\n  LD_PRELOAD: /x.so\n  DYLD_INSERT_LIBRARIES: /y\n  PYTHONPATH: /evil\n  WANDB_API_KEY: k\n"
    result = check(text)
    assert codes(result) == ["GRPO-E003", "GRPO-E003", "GRPO-E003", "GRPO-E004"]
    assert result.env == {}
    allowed = check(text, allow_env=["PYTHONPATH", "WANDB_API_KEY"])
    assert codes(allowed) == ["GRPO-E003", "GRPO-E003"] and set(allowed.env) == {"PYTHONPATH", "WANDB_API_KEY"}


def test_numbers_and_booleans_are_set_as_trl_sets_them():
    # TRL sets str(value): 1 -> '1', false -> 'False'; both work for the libraries that read them.
    result = check("env:\n  VLLM_DISABLE_COMPILE_CACHE: 1\n  TOKENIZERS_PARALLELISM: false\n  RATIO: 0.5\n")
    assert codes(result) == [] and result.valid
    assert result.env == {"VLLM_DISABLE_COMPILE_CACHE": "1", "TOKENIZERS_PARALLELISM": "False", "RATIO": "0.5"}


def test_values_whose_string_changes_meaning_are_refused():
    result = check("env:\n  A: null\n  B: [1, 2]\n  C: {x: 1}\n  D: 2\n")
    assert codes(result) == ["GRPO-E002"] * 3 and result.env == {"D": "2"}
    first = result.diagnostics[0]
    assert first.line == 2 and first.fields == ("env.A",) and "'None'" in first.message
    assert first.fix.unset == ("env.A",) and not first.fix.safe
    assert "'[1, 2]'" in result.diagnostics[1].message


def test_names_and_shape():
    assert codes(check("env:\n  1BAD: x\n")) == ["GRPO-E005"]
    assert only(check("env: [A=1]\n"), "GRPO-E001").line == 1


def test_secret_detection_looks_at_whole_words():
    result = check("env:\n  TOKENIZERS_PARALLELISM: 'false'\n  HUGGING_FACE_HUB_TOKEN: x\n  AWS_SECRET_ACCESS_KEY: y\n")
    assert codes(result) == ["GRPO-E004", "GRPO-E004"]
    assert set(result.env) == {"TOKENIZERS_PARALLELISM"}

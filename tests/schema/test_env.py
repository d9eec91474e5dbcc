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


def test_values_must_be_strings_with_a_quoting_fix():
    result = check("env:\n  A: 1\n  B: true\n  C: null\n")
    assert codes(result) == ["GRPO-E002"] * 3
    first = result.diagnostics[0]
    assert first.line == 2 and first.fields == ("env.A",) and first.fix.set == {"env.A": "1"} and first.fix.safe
    assert not result.diagnostics[1].fix.safe  # TRL would write 'True', not 'true'


def test_names_and_shape():
    assert codes(check("env:\n  1BAD: x\n")) == ["GRPO-E005"]
    assert only(check("env: [A=1]\n"), "GRPO-E001").line == 1


def test_secret_detection_looks_at_whole_words():
    result = check("env:\n  TOKENIZERS_PARALLELISM: 'false'\n  HUGGING_FACE_HUB_TOKEN: x\n  AWS_SECRET_ACCESS_KEY: y\n")
    assert codes(result) == ["GRPO-E004", "GRPO-E004"]
    assert set(result.env) == {"TOKENIZERS_PARALLELISM"}

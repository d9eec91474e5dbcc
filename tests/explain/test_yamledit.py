"""Surgical YAML edits: only the edited keys' lines change; comments, order and formatting elsewhere stay."""

from __future__ import annotations

import difflib

import pytest

from grpo_schema import check_file
from grpo_schema.engine.diagnostics import Fix
from grpo_schema.engine.yamledit import EditError, apply_fix, apply_fix_to_text, render_value
from tests.conftest import conformance_files

TEXT = """\
# header comment
model_name_or_path: Qwen/Qwen2.5-0.5B  # trailing
torch_dtype: bfloat16
warmup_ratio: 0.1   # ten percent
gradient_checkpointing_kwargs:   # kwargs
  # why reentrant is off
  use_reentrant: false
chat_template: |
  # this line is template text, not a comment
  {{ messages }}
report_to:
  - wandb
env:
  HF_HOME: /data/hf
seed: 42
"""


def changed_lines(old: str, new: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_rename_keeps_value_and_trailing_comment():
    new = apply_fix_to_text(TEXT, Fix(rename={"model_name_or_path": "model"}))
    assert changed_lines(TEXT, new) == [
        "-model_name_or_path: Qwen/Qwen2.5-0.5B  # trailing",
        "+model: Qwen/Qwen2.5-0.5B  # trailing",
    ]


def test_set_with_unset_takes_the_old_keys_place():
    new = apply_fix_to_text(TEXT, Fix(set={"warmup_steps": 0.1}, unset=("warmup_ratio",)))
    assert changed_lines(TEXT, new) == ["-warmup_ratio: 0.1   # ten percent", "+warmup_steps: 0.1  # ten percent"]


def test_removal_keeps_every_comment_and_leaves_block_scalars_alone():
    new = apply_fix_to_text(TEXT, Fix(unset=("gradient_checkpointing_kwargs", "chat_template")))
    assert "# kwargs\n# why reentrant is off\nreport_to:" in new
    assert "template text" not in new and "use_reentrant" not in new


def test_set_existing_and_new_keys_including_env():
    new = apply_fix_to_text(TEXT, Fix(set={"seed": 7, "env.HF_HOME": "/tmp", "env.NEW": "1", "max_steps": 10}))
    assert sorted(changed_lines(TEXT, new)) == sorted(
        ["-  HF_HOME: /data/hf", "+  HF_HOME: /tmp", "+  NEW: '1'", "-seed: 42", "+seed: 7", "+max_steps: 10"]
    )


def test_crlf_line_ends_survive():
    crlf = TEXT.replace("\n", "\r\n")
    new = apply_fix_to_text(crlf, Fix(rename={"torch_dtype": "dtype"}))
    assert new == crlf.replace("torch_dtype", "dtype")


def test_refuses_what_it_cannot_do_exactly():
    with pytest.raises(EditError):
        apply_fix_to_text("a: 1\na: 2\n", Fix(set={"a": 3}))  # which one?
    with pytest.raises(EditError):
        apply_fix_to_text("{a: 1}\n", Fix(set={"a": 3}))  # a flow mapping at the top
    with pytest.raises(EditError):
        apply_fix({"dtype": "x", "torch_dtype": "y"}, Fix(rename={"torch_dtype": "dtype"}))


@pytest.mark.parametrize("value", [0.1, 1e-06, True, None, "no", "a: b", [1, "x"], {"k": [1]}, "1e-6", 3])
def test_rendered_values_read_back_the_same(value):
    text = apply_fix_to_text("a: 1\n", Fix(set={"a": value}))
    assert text == f"a: {render_value(value)}\n"


def test_every_safe_fix_applies_to_its_file():
    applied = 0
    files = conformance_files("valid") + conformance_files("invalid")
    for path in files:
        result = check_file(path)
        if not result.raw:
            continue
        text = path.read_bytes().decode("utf-8")
        for diag in result.diagnostics:
            if diag.fix is not None and diag.fix.safe:
                new = apply_fix_to_text(text, diag.fix)  # verified inside: reloads to apply_fix(mapping)
                comments = [line.strip() for line in text.splitlines() if line.strip().startswith("#")]
                assert all(c in new for c in comments), (path.name, diag.fix)
                applied += 1
    assert applied >= 5 and (applied > 100 or len(files) < 100)

"""Minimal fix suggestions for the batch rules: every offered edit, applied, validates clean."""

from __future__ import annotations

from collections import Counter

import pytest

hypothesis = pytest.importorskip("hypothesis")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from grpo_schema import check_file, check_mapping, check_text  # noqa: E402
from grpo_schema.engine.yamledit import apply_fix, apply_fix_to_text  # noqa: E402
from tests.conftest import EXAMPLES, conformance_files  # noqa: E402

BATCH_CODES = ("GRPO-B001", "GRPO-B002", "GRPO-B003", "GRPO-B004")


def errors(result) -> Counter:
    return Counter(d.code for d in result.diagnostics if d.severity == "error")


def offered(diag) -> list:
    return ([diag.fix] if diag.fix else []) + list(diag.alternatives)


def assert_fixes_clean(result, world_size=None, text: str | None = None, **options) -> int:
    """Apply every fix of every batch error; the error must go and no other error may appear. Returns the count."""
    before, count = errors(result), 0
    for diag in (d for d in result.diagnostics if d.code in BATCH_CODES and d.severity == "error"):
        for fix in offered(diag):
            if text is not None:
                after = check_text(apply_fix_to_text(text, fix), world_size=world_size, **options)
            else:
                after = check_mapping(apply_fix(result.raw, fix), world_size=world_size, **options)
            now = errors(after)
            assert not now[diag.code], (diag.code, fix, [d.message for d in after.diagnostics])
            assert all(n <= before[c] for c, n in now.items()), (diag.code, fix, now, before)
            count += 1
    return count


def batch_invalid_corpus() -> list:
    return [p for p in conformance_files("invalid") if any(d.code in BATCH_CODES for d in check_file(p).diagnostics)]


def test_batch_errors_get_checked_fixes():
    files = batch_invalid_corpus()
    assert len(files) >= 4, "the corpus has a file for each of B001-B004"
    for path in files:
        result = check_file(path)
        text = path.read_text(encoding="utf-8")
        assert assert_fixes_clean(result, text=text) >= 2, path.name  # a best fix and at least one alternative


@pytest.mark.parametrize("world_size", [1, 2, 5, 8])
def test_open_r1_recipe_for_7_processes_gets_fixes_elsewhere(world_size):
    path = EXAMPLES / "open-r1.yaml"
    result = check_file(path, world_size=world_size, profiles=["open-r1"])
    b001 = next(d for d in result.diagnostics if d.code == "GRPO-B001")
    assert b001.fix is not None and "smallest edits" in b001.hint and "7 processes" in b001.hint
    assert assert_fixes_clean(result, world_size=world_size, profiles=["open-r1"]) >= 3


def test_consistent_double_setting_is_a_safe_fix():
    values = {
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        "generation_batch_size": 16,
        "steps_per_generation": 4,
    }
    b002 = next(d for d in check_mapping(values).diagnostics if d.code == "GRPO-B002")
    assert b002.fix.safe and b002.fix.unset == ("steps_per_generation",)
    inconsistent = next(
        d for d in check_mapping({**values, "steps_per_generation": 2}).diagnostics if d.code == "GRPO-B002"
    )
    assert not inconsistent.fix.safe


def test_world_size_fix_edits_num_processes_only_when_not_given_on_the_command_line():
    values = {"per_device_train_batch_size": 1, "num_generations": 8}
    from_file = check_mapping({**values, "num_processes": 3})
    assert any(f.set.get("num_processes") == 8 for d in from_file.diagnostics for f in offered(d))
    from_cli = check_mapping(values, world_size=3)
    b001 = next(d for d in from_cli.diagnostics if d.code == "GRPO-B001")
    assert "run on 8 processes" in b001.hint and not any("num_processes" in f.set for f in offered(b001))


def test_batch_fixes_are_never_safe_so_validate_fix_leaves_them():
    result = check_mapping({"per_device_train_batch_size": 3, "num_generations": 4})
    assert all(not f.safe for d in result.diagnostics for f in offered(d))


@settings(max_examples=60, deadline=None)
@given(
    values=st.fixed_dictionaries(
        {
            "per_device_train_batch_size": st.integers(1, 12),
            "num_generations": st.integers(2, 16),
            "gradient_accumulation_steps": st.integers(1, 8),
        },
        optional={
            "generation_batch_size": st.integers(2, 128),
            "steps_per_generation": st.integers(1, 8),
            "eval_strategy": st.just("steps"),
            "per_device_eval_batch_size": st.integers(1, 12),
            "num_generations_eval": st.integers(2, 12),
        },
    ),
    world_size=st.integers(1, 16),
)
def test_every_suggested_fix_validates_clean(values, world_size):
    result = check_mapping(values, world_size=world_size)
    assert_fixes_clean(result, world_size=world_size)
    for diag in result.diagnostics:
        if diag.code in ("GRPO-B001", "GRPO-B003") and not values.get("generation_batch_size"):
            assert diag.fix is not None, (values, world_size, diag.message)  # a derived batch can always be fixed

"""Property tests: any text, bytes or mapping gives a structured result, quickly; never an exception or a hang.

A small budget runs in the normal suite; `pytest -m fuzz tests/hardening` runs the large one (HARDENING_EXAMPLES
overrides its size). Each example has a hard time limit (SIGALRM), so a hang fails the test with the input.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from grpo_schema import check_mapping, check_text
from grpo_schema.engine.loader import load_yaml
from tests.hardening import strategies as s
from tests.hardening.invariants import assert_diagnostic_shape, assert_explains, assert_structured, time_limit

SMALL = 60
LARGE = int(os.environ.get("HARDENING_EXAMPLES", "3000"))
SECONDS_PER_EXAMPLE = 10  # generous: the machine is shared; real inputs take milliseconds
QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def budget(examples: int):
    return settings(max_examples=examples, deadline=None, suppress_health_check=QUIET, derandomize=False)


def check_any_text(data, options) -> None:
    with time_limit(SECONDS_PER_EXAMPLE):
        result = check_text(data, path="fuzz.yaml", **options)
        assert_structured(result)
        assert_explains(result)


def check_any_mapping(mapping, options) -> None:
    with time_limit(SECONDS_PER_EXAMPLE):
        result = check_mapping(mapping, path="fuzz.json", **options)
        assert_structured(result)
        assert_explains(result)


def load_any(data) -> None:
    with time_limit(SECONDS_PER_EXAMPLE):
        loaded = load_yaml(data)
    for d in loaded.diagnostics:
        assert_diagnostic_shape(d.to_dict())
    if not loaded.ok:  # a refusal says why and carries no half-built data
        assert loaded.data is None and any(d.severity == "error" for d in loaded.diagnostics)


@budget(SMALL)
@given(data=s.raw_inputs, options=s.check_options)
def test_any_text_or_bytes_gives_a_structured_result(data, options):
    check_any_text(data, options)


@budget(SMALL)
@given(mapping=s.mappings, options=s.check_options)
def test_any_mapping_gives_a_structured_result(mapping, options):
    check_any_mapping(mapping, options)


@budget(SMALL)
@given(data=s.raw_inputs)
def test_the_loader_never_raises(data):
    load_any(data)


@pytest.mark.fuzz
@budget(LARGE)
@given(data=s.raw_inputs, options=s.check_options)
def test_fuzz_text_or_bytes(data, options):
    check_any_text(data, options)


@pytest.mark.fuzz
@budget(LARGE)
@given(mapping=s.mappings, options=s.check_options)
def test_fuzz_mappings(mapping, options):
    check_any_mapping(mapping, options)

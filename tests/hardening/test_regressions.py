"""Every defect the fuzzers and the hardening review found, as the smallest input that showed it.

Each test names the finding: what used to happen (an exception, a hang, a wrong position) and what the contract
requires instead (a coded diagnostic, quickly). Inputs found by atheris live in tests/hardening/crashes/.
"""

from __future__ import annotations

import pytest

from grpo_schema import check_text
from grpo_schema.loader import load_yaml
from tests.hardening.invariants import assert_explains, assert_structured, time_limit


def codes_of(text: str, **options) -> list[str]:
    with time_limit(10):
        result = check_text(text, **options)
        assert_structured(result)
        assert_explains(result)
    return [d.code for d in result.diagnostics]


@pytest.mark.parametrize("text", [
    "learning_rate: 2001-02-30",  # a date the resolver matches but datetime refuses: ValueError
    "seed: !!int abc", "seed: !!float abc", "bf16: !!bool maybe",  # explicit tags: ValueError, KeyError
    "run_name: !!timestamp foo", "run_name: !!timestamp 2001-13-45",  # AttributeError, ValueError
])
def test_values_pyyaml_cannot_construct_are_a_syntax_diagnostic(text):
    """Found by the property tests: PyYAML's constructors raised plain Python errors through load_yaml."""
    loaded = load_yaml(text)
    assert not loaded.ok and [d.code for d in loaded.diagnostics] == ["GRPO-Y001"]
    assert loaded.diagnostics[0].line == 1 and "is not a valid" in loaded.diagnostics[0].message
    assert codes_of(text) == ["GRPO-Y001"]


@pytest.mark.parametrize("digits", [
    "9" * 5000,  # int(): "Exceeds the limit (4300 digits)" ValueError
    "0b1" + "0" * 20000,  # parses, but str() of the value raised later, in every message that showed it
    "0x1" + "0" * 5000, "01" + "0" * 5000,
    ":".join(["59"] * 100_000),  # YAML 1.1 base 60: quadratic big-int arithmetic, minutes for 300 kB
])
def test_integers_too_long_to_read_are_refused_before_conversion(digits):
    assert codes_of(f"num_generations: {digits}\n") == ["GRPO-Y001"]

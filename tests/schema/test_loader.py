"""The YAML loader: positions of every key, and every resource bounded."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from grpo_schema.engine.loader import MAX_BYTES, load_yaml
from tests.schema.helpers import check, codes


def test_positions_of_keys_nested_and_in_lists():
    loaded = load_yaml("a: 1\nb:\n  c: 2\ndatasets:\n  - path: x\n    split: train\n")
    assert loaded.positions.keys[("a",)] == (1, 1)
    assert loaded.positions.keys[("b", "c")] == (3, 3)
    assert loaded.positions.keys[("datasets", 0, "split")] == (6, 5)
    assert loaded.positions.of(("datasets", 0, "missing")) == (5, 5)  # falls back to the list item


def test_values_match_safe_load_yaml11_resolution():
    loaded = load_yaml("lr: 1e-6\nlr2: 1.0e-6\nflag: no\nn: 0x10\nnull_v: ~\nwhen: 2024-01-01\n")
    assert loaded.data["lr"] == "1e-6"  # YAML 1.1: no dot, so a string (TRL converts it)
    assert loaded.data["lr2"] == 1e-6
    assert loaded.data["flag"] is False
    assert loaded.data["n"] == 16
    assert loaded.data["null_v"] is None
    assert str(loaded.data["when"]) == "2024-01-01"


def test_duplicate_key_with_different_values_is_an_error():
    result = check("num_generations: 4\nlearning_rate: 1.0e-6\nnum_generations: 8\n")
    diag = next(d for d in result.diagnostics if d.code == "GRPO-Y003")
    assert diag.line == 3 and "first at line 1" in diag.message
    assert result.config.num_generations == 8  # the last one wins, as in every YAML loader


def test_duplicate_key_with_the_same_value_is_a_warning():
    result = check("do_eval: false\nbeta: 0.0\ndo_eval: false\n")
    assert "GRPO-Y014" in codes(result, "warning") and "GRPO-Y003" not in codes(result)


def test_billion_laughs_is_refused_fast_and_small():
    bomb = "a: &a [" + ",".join(["lol"] * 10) + "]\n"
    for name, prev in zip("bcdefghi", "abcdefgh"):
        bomb += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 10) + "]\n"
    tracemalloc.start()
    started = time.perf_counter()
    result = check(bomb)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert codes(result) == ["GRPO-Y006"]
    assert elapsed < 0.5 and peak < 20_000_000


def test_recursive_alias_is_refused():
    assert codes(check("a: &a [1, *a]\n")) == ["GRPO-Y006"]


def test_merge_keys_work_and_count():
    loaded = load_yaml("base: &b {x: 1, y: 2}\nrun:\n  <<: *b\n  y: 3\n")
    assert loaded.data["run"] == {"x": 1, "y": 3}


@pytest.mark.parametrize(
    "text,code",
    [
        ("a:\n\tb: 1\n", "GRPO-Y002"),
        ("a: [1, 2\n", "GRPO-Y001"),
        ("a: 1\n---\nb: 2\n", "GRPO-Y009"),
        ("a: !!python/object/apply:os.system ['true']\n", "GRPO-Y012"),
        ("- a\n- b\n", "GRPO-Y004"),
        ("", "GRPO-Y005"),
        ("# only a comment\n", "GRPO-Y005"),
        ("just a string\n", "GRPO-Y004"),
    ],
)
def test_bad_documents_get_positioned_codes(text, code):
    result = check(text)
    assert codes(result)[:1] == [code]
    assert not result.valid


def test_nesting_is_bounded_without_recursion_errors():
    deep = "a: " + "[" * 10_000 + "]" * 10_000 + "\n"
    started = time.perf_counter()
    result = check(deep)
    assert codes(result) == ["GRPO-Y008"]
    assert time.perf_counter() - started < 1


def test_size_is_bounded_before_parsing():
    big = "x: " + "a" * (MAX_BYTES + 1)
    started = time.perf_counter()
    assert codes(check(big)) == ["GRPO-Y007"]
    assert time.perf_counter() - started < 0.5


def test_many_keys_are_bounded():
    text = "".join(f"k{i}: {i}\n" for i in range(60_000))
    assert "GRPO-Y013" in codes(check(text)) or "GRPO-Y007" in codes(check(text))


def test_non_string_keys_are_reported():
    result = check("on: 1\n2: x\nnull: y\n")
    assert codes(result).count("GRPO-Y010") == 3


def test_not_utf8_is_reported():
    assert codes(check(b"a: \xff\xfe\n")) == ["GRPO-Y011"]


def test_json_input_gets_positions_too():
    result = check('{\n  "num_generations": 3,\n  "per_device_train_batch_size": 4\n}\n')
    diag = next(d for d in result.diagnostics if d.code == "GRPO-B001")
    assert diag.line == 2

"""Every defect the fuzzers and the hardening review found, as the smallest input that showed it.

Each test names the finding: what used to happen (an exception, a hang, a wrong position) and what the contract
requires instead (a coded diagnostic, quickly). Inputs found by atheris live in tests/hardening/crashes/, as
fuzz/fuzz_validate.py wrote them; every file there is replayed through load_yaml and check_text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grpo_schema import check_text
from grpo_schema.engine.loader import load_yaml
from tests.hardening.invariants import assert_explains, assert_structured, time_limit
from tests.support.cli import grpo

CRASHES = sorted((Path(__file__).parent / "crashes").glob("*"))


@pytest.mark.parametrize("path", CRASHES, ids=[p.name for p in CRASHES])
def test_inputs_that_crashed_the_fuzzer_give_diagnostics(path):
    data = path.read_bytes()
    loaded = load_yaml(data)  # must not raise
    assert loaded.ok or any(d.severity == "error" for d in loaded.diagnostics)  # a refusal says why
    with time_limit(10):
        assert_structured(check_text(data))


def codes_of(text: str, **options) -> list[str]:
    with time_limit(10):
        result = check_text(text, **options)
        assert_structured(result)
        assert_explains(result)
    return [d.code for d in result.diagnostics]


@pytest.mark.parametrize(
    "text",
    [
        "learning_rate: 2001-02-30",  # a date the resolver matches but datetime refuses: ValueError
        "seed: !!int abc",
        "seed: !!float abc",
        "bf16: !!bool maybe",  # explicit tags: ValueError, KeyError
        "run_name: !!timestamp foo",
        "run_name: !!timestamp 2001-13-45",  # AttributeError, ValueError
        "seed: !!int",
        "seed: !!int +",
        "seed: !!int _",
        "beta: !!float ''",  # found by atheris: IndexError
    ],
)
def test_values_pyyaml_cannot_construct_are_a_syntax_diagnostic(text):
    """Found by the property tests: PyYAML's constructors raised plain Python errors through load_yaml."""
    loaded = load_yaml(text)
    assert not loaded.ok and [d.code for d in loaded.diagnostics] == ["GRPO-Y001"]
    assert loaded.diagnostics[0].line == 1 and "is not a valid" in loaded.diagnostics[0].message
    assert codes_of(text) == ["GRPO-Y001"]


@pytest.mark.parametrize(
    "digits",
    [
        "9" * 5000,  # int(): "Exceeds the limit (4300 digits)" ValueError
        "0b1" + "0" * 20000,  # parses, but str() of the value raised later, in every message that showed it
        "0x1" + "0" * 5000,
        "01" + "0" * 5000,
        ":".join(["59"] * 100_000),  # YAML 1.1 base 60: quadratic big-int arithmetic, minutes for 300 kB
    ],
)
def test_integers_too_long_to_read_are_refused_before_conversion(digits):
    assert codes_of(f"num_generations: {digits}\n") == ["GRPO-Y001"]


@pytest.mark.parametrize(
    "mapping",
    [
        {"per_device_train_batch_size": 10**400},
        {"gradient_accumulation_steps": 10**400},
        {"steps_per_generation": 10**400},
        {"generation_batch_size": 10**400},
        {"num_iterations": 10**400},
        {"num_generations": "9" * 30},
        {"seed": -(2**63) - 1},
        {"num_processes": 10**30},
    ],
)
def test_integers_past_64_bits_are_a_range_diagnostic(mapping):
    """Found by the property tests: 10**400 in a batch field reached the plan, whose float division raised
    OverflowError ('integer division result too large for a float'); TRL's torch and numpy would overflow too."""
    from grpo_schema import check_mapping

    with time_limit(10):
        result = check_mapping(mapping)
    assert_structured(result)
    (name,) = mapping
    (found,) = [d for d in result.diagnostics if d.fields == (name,) and d.severity == "error"]
    assert found.code == "GRPO-T002" and "does not fit in 64 bits" in found.message


@pytest.mark.parametrize(
    ("text", "fields", "line", "column"),
    [
        ("num_generations: 8\nmodel.name: x\n", ("model.name",), 2, 1),  # a dotted key, as if YAML nested it
        ("a[0]: 1\n", ("a[0]",), 1, 1),
        ("a[²]: 1\n", ("a[²]",), 1, 1),  # found by test_fuzzed_config_objects_are_always_200: '²' passes isdigit()
        ("env:\n  A.B: x\n", ("env.A.B",), 2, 3),  # used to point at 'env' (1:1), the first part of 'A.B'
        ("datasets:\n  - path: x\n    Split: train\n", ("datasets[0].Split",), 3, 5),  # was reported as key '0'
        ("datasets: [{Path: x}]\n", ("datasets[0].Path",), 1, 13),
    ],
)
def test_keys_with_dots_brackets_or_capitals_keep_their_name_and_position(text, fields, line, column):
    """Found while reviewing fuzz output: a top-level key containing '.' or '[' lost its line (null), an env name
    containing '.' pointed at `env:`, and a nested unknown key starting with a capital or containing '[' was
    dropped as if it were a pydantic union tag ("unknown key '0' in datasets")."""
    result = check_text(text)
    assert_structured(result)
    (found,) = [d for d in result.diagnostics if d.fields == fields]
    assert (found.line, found.column) == (line, column)
    assert fields[0].rsplit(".", 1)[-1] in found.message or found.code == "GRPO-K001"


@pytest.mark.parametrize(
    "text",
    [
        "num_generations: " + ":".join(["59"] * 10),  # base 60: 604661759999999999
        "num_generations: 3\nnum_processes: 1000000000000\n",
        "per_device_train_batch_size: 9223372036854775807\nnum_generations: 2\ngeneration_batch_size: 9223372036854775806",
    ],
)
def test_batch_fixes_search_a_bounded_window(text):
    """Found by a probe of huge values: the minimal-edit search scanned every integer between the value and 1
    (or 8x the value) for a batch error, so a 60-byte file never finished validating."""
    with time_limit(10):
        result = check_text(text)
    assert_structured(result)
    assert any(d.code.startswith("GRPO-B") for d in result.diagnostics)


@pytest.mark.parametrize(
    "text",
    [
        "per_device_train_batch_size: 10000000\nnum_generations: 2\n",  # 10**7 rows listed per process
        "per_device_train_batch_size: 2\nnum_generations: 2\nnum_processes: 100000\n",  # 100,000 processes
        "num_processes: 9000000000000000000\nper_device_train_batch_size: 2\nnum_generations: 2\n",
    ],
)
def test_explain_lists_a_bounded_schedule(text):
    """Found by a probe of huge values: the explain walk listed every row of every process (POST /api/v1/explain
    with a 50-byte body took minutes and gigabytes); it now stops at MAX_LISTED entries."""
    import json

    from grpo_schema.engine.schedule import MAX_LISTED

    with time_limit(10):
        document = assert_explains(check_text(text))
    assert len(json.dumps(document)) < MAX_LISTED * 100


def test_a_huge_world_size_range_is_refused_before_it_is_built():
    """`grpo validate --world-sizes 1-10000000000` built the whole set before checking its size."""
    from grpo_schema.commands.matrix import parse_world_sizes

    with time_limit(5), pytest.raises(ValueError, match="at most"):
        parse_world_sizes("1-10000000000000")


def test_many_unknown_keys_are_reported_quickly():
    """Found by the resource tests: 24,000 unknown keys (a 240 kB file) took 16 s, 0.6 ms of did-you-mean each.
    Suggestions stop after keys.MAX_SUGGESTED; every key is still reported."""
    text = "".join(f"k{i}: 1\n" for i in range(24_000))
    with time_limit(8):
        result = check_text(text)
    assert sum(d.code == "GRPO-K001" for d in result.diagnostics) == 24_000


@pytest.mark.parametrize(
    "names",
    [
        [f"accuracy_rewar{i % 10}" for i in range(20_000)],  # 10 distinct near-misses, 20,000 times
        [f"accuracy_reward{i}" for i in range(20_000)],  # 20,000 distinct near-misses
        [f"x{i}" for i in range(20_000)],
    ],
)
def test_a_long_list_of_bad_reward_names_gives_a_bounded_answer(names):
    """Found by the resource tests: each misspelled reward name was a diagnostic whose fix carried the whole list,
    so 20,000 of them took 460 s and produced 7.6 GB of JSON from a 320 kB file. Names are now reported once
    each, at most rules.MAX_FINDINGS_PER_RULE per rule (and a note), with a fix only for short lists."""
    import json

    from grpo_schema.engine.rules import MAX_FINDINGS_PER_RULE

    with time_limit(10):
        result = check_text("reward_funcs: [" + ", ".join(names) + "]\n")
        out = json.dumps(result.to_dict())
    rewards = [d for d in result.diagnostics if d.code == "GRPO-R002"]
    assert 10 <= len(rewards) <= MAX_FINDINGS_PER_RULE + 1 and len(out) < 200_000
    assert "more than" in rewards[-1].message or len(set(names)) <= MAX_FINDINGS_PER_RULE


def test_messages_quoting_a_huge_value_are_clipped():
    """A 1 MB reward name made a 1 MB message and a 1 MB hint; check.MAX_TEXT bounds both."""
    from grpo_schema.engine.placing import MAX_TEXT

    result = check_text("reward_funcs: [" + "r" * 900_000 + "]\n")
    assert_structured(result)
    assert max(len(d.message) + len(d.hint) for d in result.diagnostics) <= 2 * MAX_TEXT


@pytest.mark.parametrize("text", ["reward_weights: .nan\n", "reward_funcs: .inf\n", "label_names: -.inf\n"])
def test_json_outputs_stay_strict_json_with_non_finite_values(text, tmp_path):
    """Found by the large property-test budget: a scalar-for-list fix wraps the value ([.nan]), so
    `grpo validate --format json` / `--format sarif` and `grpo explain --format json` printed NaN or Infinity,
    which JSON parsers refuse. Every JSON output now writes them as their YAML spelling, as the service does."""
    from tests.hardening.invariants import strict_json

    config = tmp_path / "run.yaml"
    config.write_text(text)
    for argv in (
        ["validate", "--format", "json"],
        ["validate", "--format", "sarif"],
        ["explain", "--format", "json"],
        ["validate", "--format", "json", "--world-sizes", "1-4"],
    ):
        done = grpo(argv[0], str(config), *argv[1:])
        assert "Traceback" not in done.stderr, done.stderr[-500:]
        strict_json(done.stdout)
        assert ".nan" in done.stdout or ".inf" in done.stdout


@pytest.mark.parametrize(
    "mapping",
    [
        {"accelerator_config": {"\x1b[2J": None}},  # found by test_fuzz_mappings: a key with ESC reached the terminal
        {"run_name\u202e": 1},
        {"reward_funcs": ["a\x07b"]},
        {"a\nb": 1},
    ],
)
def test_terminal_output_escapes_control_characters_from_the_config(mapping):
    """Keys and values land in messages; the text output must not let them drive the terminal (ESC, BEL, bidi
    overrides, newlines that fake a diagnostic). They are shown escaped."""
    import io

    from grpo_schema import check_mapping
    from grpo_schema.render.machine import render_github
    from grpo_schema.render.text import render

    result = check_mapping(mapping, path="evil\x1b.json")
    text = render([result], {}, io.StringIO())
    assert not any(c in text for c in "\x1b\x07\u202e"), repr(text)
    assert "\\x1b" in text  # the file name, escaped
    github = render_github([result])
    assert not any(c in github for c in "\x1b\x07\u202e") and len(github.splitlines()) == len(result.diagnostics)
    assert all(not line or line.startswith(("evil", " ")) for line in text.split("\n")), text


@pytest.mark.parametrize(
    "text, value",
    [
        ("torch_dtype: [2024-01-01]\n", "[2024-01-01]"),  # a date inside a list: the fix text raised TypeError (500)
        ("torch_dtype: [.nan, 2024-01-01]\n", "[.nan, 2024-01-01]"),
    ],
)
def test_fix_and_hint_texts_write_any_yaml_value(text, value):
    """Found reviewing the change: yaml_value wrote lists through json.dumps, which refuses dates; every value the
    loader can build must be written back as YAML that loads to the same value."""
    import yaml

    from grpo_schema.engine.diagnostics import yaml_value

    codes_of(text)  # structured, explainable, no exception
    loaded = load_yaml(text).data["torch_dtype"]
    assert yaml_value(loaded) == value
    assert repr(yaml.safe_load(f"k: {value}")["k"]) == repr(loaded)

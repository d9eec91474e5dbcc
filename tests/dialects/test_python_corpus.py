"""Every script and notebook of ../shared/python-corpus (real files nobody here wrote) read with the right calls,
lines and values, and judged at the TRL release and world size its repository pins (the corpus README's reading).
Deselected, with a line saying so, where ../shared is absent."""

from __future__ import annotations

import pytest

from tests.conftest import SHARED

CORPUS = SHARED / "python-corpus"
U = "unknown"  # a value the file only has at run time


def row(number, where, release, verdict, values=None, unknown=(), world=1, codes=()):
    marks = [pytest.mark.shared]
    return pytest.param(
        number, where, release, verdict, values or {}, unknown, world, codes, marks=marks, id=f"{number:02d}"
    )


ROWS = [
    # number, (cell, line) or line, release, verdict, values, unknown keys, world size, codes that must be there
    row(
        1,
        (59, 15),
        "0.22.2",
        "rewritten",
        {"per_device_train_batch_size": 1, "num_generations": 4, "temperature": 1.0, "learning_rate": 5e-6},
        ("vllm_sampling_params", "max_prompt_length"),
    ),
    row(
        2,
        214,
        "0.22.2",
        "rewritten",
        {
            "per_device_train_batch_size": 1,
            "num_generations": 6,
            "max_prompt_length": 256,
            "max_completion_length": 768,
        },
    ),
    row(
        3,
        (28, 2),
        "0.22.2",
        "rewritten",
        {
            "gradient_accumulation_steps": 2,
            "num_train_epochs": 0.5,
            "importance_sampling_level": "sequence",
            "loss_type": "dr_grpo",
        },
    ),
    row(
        4,
        (37, 4),
        "0.22.2",
        "valid",
        {
            "gradient_accumulation_steps": 4,
            "num_generations": 4,
            "max_prompt_length": 288,
            "max_completion_length": 1760,
        },
    ),
    row(5, 502, "0.29.1", "valid", {"gradient_accumulation_steps": 4, "num_generations": 4, "beta": 0.02}),
    row(6, (12, 2), "0.15.2", "rewritten", {"num_generations": 8, "use_vllm": True}, ("bf16", "fp16")),
    row(7, 563, "1.9.2", "valid", {"loss_type": "dr_grpo"}, ("per_device_train_batch_size", "num_generations")),
    row(
        8,
        253,
        "1.10.0",
        "depends",
        {"use_vllm": True, "report_to": "trackio"},
        ("num_generations", "gradient_accumulation_steps", "vllm_mode"),
    ),
    row(9, 122, "1.10.0", "depends", {}, (), world=2, codes=("GRPO-F004",)),
    row(
        10,
        (29, 4),
        "1.10.0",
        "valid",
        {
            "per_device_train_batch_size": 8,
            "num_generations": 8,
            "use_liger_kernel": True,
            "model_init_kwargs": {"attn_implementation": "sdpa", "dtype": "float32"},
        },
    ),
    row(11, (21, 6), "1.10.0", "valid", {"per_device_train_batch_size": 2, "num_generations": 2, "fp16": True}),
    row(12, 143, "1.10.0", "valid", {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 2}),
    row(
        13,
        (24, 2),
        "0.21.0",
        "valid",
        {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 8, "max_prompt_length": 1024},
    ),
    row(14, (31, 4), "0.27.0", "valid", {"per_device_train_batch_size": 2, "num_generations": 2}, codes=("GRPO-D006",)),
    row(
        15,
        (11, 8),
        "0.15.2",
        "valid",
        {
            "per_device_train_batch_size": 8,
            "num_generations": 8,
            "overwrite_output_dir": True,
            "hub_model_id": "anakin87/qwen-scheduler-7b-grpo",
        },
    ),
    row(16, (11, 4), "0.14.0", "valid", {"num_generations": 4, "gradient_accumulation_steps": 16}),
    row(17, 12, "0.18.2", "valid", {"vllm_mode": "colocate", "per_device_train_batch_size": 4, "report_to": None}),
    row(18, 177, "0.17.0", "valid", {"per_device_train_batch_size": 8, "num_generations": 4, "beta": 0.001}),
    row(19, 133, "0.24.0", "valid", {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 2}, world=8),
    # warmup_ratio: TRL 0.29 accepts transformers>=4.56.2 and the repository locks 5.3.0, which still reads it
    row(
        20,
        296,
        "0.29.0",
        "depends",
        {"temperature": 1.0},
        ("num_generations", "per_device_train_batch_size"),
        codes=("GRPO-K011",),
    ),
    row(21, 28, "1.5.1", "depends", {}, ("output_dir",), codes=("GRPO-F004",)),
    row(
        22,
        59,
        "0.14.0",
        "invalid",
        {"learning_rate": 2e-5, "max_length": 256},
        ("batch_size", "group_size"),
        codes=("GRPO-K001",),
    ),
    row(23, 228, "0.16.1", "depends", {}, ("per_device_train_batch_size", "num_generations", "vllm_server_host")),
    row(
        24,
        148,
        "0.29.0",
        "invalid",
        {"per_device_train_batch_size": 1, "gradient_accumulation_steps": 4, "num_generations": 2},
        ("bf16",),
        codes=("GRPO-K003",),
    ),
    row(
        25,
        160,
        "1.8.0",
        "depends",
        {"per_device_train_batch_size": 1},
        ("gradient_accumulation_steps", "num_generations"),
    ),
    row(26, 10, "0.15.2", "valid", {"output_dir": "Qwen2-0.5B-GRPO", "logging_steps": 10}, world=7),
    row(
        27,
        308,
        "0.29.1",
        "valid",
        {
            "per_device_train_batch_size": 2,
            "gradient_accumulation_steps": 8,
            "num_generations": 4,
            "vllm_mode": "colocate",
            "warmup_ratio": 0.05,
        },
        codes=("GRPO-K011",),
    ),
    row(28, 11, "0.15.2", "depends", {}, ("per_device_train_batch_size", "num_generations", "vllm_device")),
    row(29, 93, "0.18.0", "invalid", {"generation_batch_size": 1, "num_generations": 4}, codes=("GRPO-B001",)),
    row(
        30,
        220,
        "0.24.0",
        "valid",
        {"per_device_train_batch_size": 1, "gradient_accumulation_steps": 8, "num_generations": 4},
        ("bf16",),
    ),
    row(
        31,
        117,
        "0.26.2",
        "valid",
        {
            "per_device_train_batch_size": 24,
            "num_generations": 8,
            "generation_kwargs": {"max_length": 1024, "max_new_tokens": 64, "max_time": 30},
        },
    ),
    row(32, 200, "1.5.1", "depends", {}, ("per_device_train_batch_size", "gradient_accumulation_steps"), world=2),
]


@pytest.mark.parametrize("number,where,release,verdict,values,unknown,world,codes", ROWS)
def test_corpus_file(number, where, release, verdict, values, unknown, world, codes):
    from grpo_schema.dialects.python import check_python
    from grpo_schema.dialects.python.values import Unknown

    (path,) = CORPUS.glob(f"{number:02d}_*")
    check = check_python(path.read_bytes(), path.name, trl_version=release, trl_version_source="flag", world_size=world)
    (call,) = check.calls  # one GRPOConfig(...) call a file
    assert ((call.cell, call.line) if call.cell is not None else call.line) == where
    for key, value in values.items():
        assert call.mapping[key] == value, key
    assert set(unknown) <= set(call.unknown), set(unknown) - set(call.unknown)
    assert not any(isinstance(v, Unknown) for k, v in call.mapping.items() if k not in call.unknown)
    result = check.results[0]
    found = {d.code for d in result.diagnostics}
    assert set(codes) <= found
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if verdict == "valid":
        assert result.valid, [d.message for d in errors]
    elif verdict == "invalid":
        assert errors
    elif verdict == "depends":  # valid as far as it can be seen, and the run-time values said
        assert result.valid, [d.message for d in errors]
        assert found & {"GRPO-F003", "GRPO-F004"}
    else:  # Unsloth imported: plain TRL refuses the batch, Unsloth rewrites it to num_generations and trains
        rewrite = next(d for d in result.diagnostics if d.code == "GRPO-B001")
        assert result.valid and rewrite.severity == "warning" and "Unsloth replaces" in rewrite.message
        assert "TRL alone" in rewrite.message and check.unsloth
        assert result.plan.per_device_train_batch_size == call.mapping["num_generations"]


@pytest.mark.shared
@pytest.mark.parametrize(
    "number,release,source",
    [
        (1, "0.22.2", "install line"),
        (6, "0.15.2", "install line"),
        (7, "1.9.2", "install line"),
        (15, "0.15.2", "unsloth==2025.3"),
        (16, "0.14.0", "install line"),
        (2, "0.22.2", "install line"),
    ],
)
def test_the_release_comes_from_the_files_own_install_line(number, release, source):
    from grpo_schema.dialects.python import check_python

    (path,) = CORPUS.glob(f"{number:02d}_*")
    result = check_python(path.read_bytes(), path.name, trl_version="1.16.0", trl_version_source="default").results[0]
    assert (result.trl_version, source in result.trl_version_source) == (release, True)


@pytest.mark.shared
def test_a_world_size_the_literal_relies_on():
    from grpo_schema.dialects.python import check_python

    (path,) = CORPUS.glob("19_*")
    result = check_python(path.read_bytes(), path.name, trl_version="0.24.0", trl_version_source="flag").results[0]
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["GRPO-B001"]  # 2 x 1 x 2 vs 8


@pytest.mark.shared
def test_export_of_every_corpus_call_validates_with_the_same_codes():
    """What the YAML can carry gives what the call gives: the Python-only findings (F codes, the script's own
    keys, Unsloth's rewrite as a warning) aside, the same codes at the same release."""
    from grpo_schema.dialects.python import check_python
    from grpo_schema.dialects.python.export import export_yaml
    from grpo_schema.engine.check import check_text

    compared = 0
    for number, (release, _world) in {
        1: ("0.22.2", 1),
        2: ("0.22.2", 1),
        4: ("0.22.2", 1),
        13: ("0.21.0", 1),
        17: ("0.18.2", 1),
        24: ("0.29.0", 1),
        29: ("0.18.0", 1),
        31: ("0.26.2", 1),
    }.items():
        (path,) = CORPUS.glob(f"{number:02d}_*")
        check = check_python(path.read_bytes(), path.name, trl_version=release, trl_version_source="flag")
        text = export_yaml(check, 0)
        yaml_result = check_text(text, path="export.yaml")
        python_only = ("GRPO-F", "GRPO-S006", "GRPO-R004")
        ours = sorted(
            d.code
            for d in check.results[0].diagnostics
            if not d.code.startswith(python_only) and d.fields[:1] not in [(k,) for k in check.calls[0].unknown]
        )
        theirs = sorted(
            d.code
            for d in yaml_result.diagnostics
            if not d.code.startswith(python_only) and not set(d.fields) & set(check.calls[0].unknown)
        )
        assert yaml_result.trl_version == release and ours == theirs, (number, ours, theirs, text)
        compared += 1
    assert compared == 8


@pytest.mark.shared
@pytest.mark.parametrize("number,release", [(8, "1.10.0"), (20, "0.29.0"), (23, "0.16.1")])
def test_argparse_driven_files_are_judged_with_their_defaults_as_an_information(number, release):
    """The corpus README's reading of these files: valid with the parser's defaults (said, never the verdict)."""
    from grpo_schema.dialects.python import check_python

    (path,) = CORPUS.glob(f"{number:02d}_*")
    result = check_python(path.read_bytes(), path.name, trl_version=release, trl_version_source="flag").results[0]
    (defaults,) = [d for d in result.diagnostics if d.code == "GRPO-F011"]
    assert "num_generations=" in defaults.message and ": valid at world size 1" in defaults.message

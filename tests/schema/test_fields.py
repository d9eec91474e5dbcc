"""Field types: accept what TRL accepts from YAML, refuse what it should refuse, and say so per field."""

from __future__ import annotations

import pytest

from grpo_schema.api.config import GRPORunConfig
from grpo_schema.engine.compiled import compiled
from tests.schema.helpers import check, codes, only


def test_defaults_of_the_pydantic_model_match_the_compiled_validator():
    assert GRPORunConfig().model_dump() == check("{}").config.model_dump()


@pytest.mark.parametrize(
    "text,field,value",
    [
        ("learning_rate: 1e-6", "learning_rate", 1e-6),  # a string to PyYAML; TRL converts it
        ('num_generations: "4"', "num_generations", 4),
        ('use_vllm: "yes"', "use_vllm", True),
        ("scale_rewards: true", "scale_rewards", "group"),
        ("scale_rewards: false", "scale_rewards", "none"),
        ("max_completion_length: null", "max_completion_length", None),
        ('pad_to_multiple_of: "64"', "pad_to_multiple_of", 64),
        ('model_init_kwargs: \'{"dtype": "bfloat16", "n": "2"}\'', "model_init_kwargs", {"dtype": "bfloat16", "n": 2}),
        ("report_to: [wandb, tensorboard]", "report_to", ["wandb", "tensorboard"]),
        ("resume_from_checkpoint: true", "resume_from_checkpoint", True),
        ("lora_target_modules: all-linear", "lora_target_modules", "all-linear"),
    ],
)
def test_yaml_values_are_converted_like_trl(text, field, value):
    result = check(text)
    assert not [d for d in result.diagnostics if d.code.startswith("GRPO-T")], result.diagnostics
    assert getattr(result.config, field) == value


@pytest.mark.parametrize(
    "text,code",
    [
        ("num_generations: 8.5", "GRPO-T001"),
        ("num_generations: true", "GRPO-T001"),
        ("temperature: {a: 1}", "GRPO-T001"),
        ("temperature: .nan", "GRPO-T001"),
        ("learning_rate: .inf", "GRPO-T001"),
        ("num_generations: eight", "GRPO-T001"),
        ("max_steps: 1e3", "GRPO-T001"),
        ("reward_funcs: accuracy_reward", "GRPO-T007"),
        ("reward_weights: 1.0", "GRPO-T007"),
        ("eval_strategy: no", "GRPO-T008"),
        ("save_strategy: no", "GRPO-T008"),
        ("generation_kwargs: '{not json'", "GRPO-T006"),
        ("loss_type: drgrpo", "GRPO-T003"),
        ("top_p: 0", "GRPO-T002"),
        ("vllm_gpu_memory_utilization: 70", "GRPO-T002"),
        ("debug: everything", "GRPO-T003"),
        ("fsdp: full_shard sideways", "GRPO-T003"),
    ],
)
def test_bad_values_are_refused_with_a_coded_diagnostic(text, code):
    result = check(text)
    field = text.split(":")[0]
    diag = only(result, code)
    assert diag.fields == (field,) and diag.line == 1 and field in diag.message
    assert not result.valid


def test_refused_values_fall_back_to_defaults_and_other_rules_still_run():
    result = check("num_generations: eight\nfp16: true\nbf16: true\n")
    assert codes(result, "error") == ["GRPO-T001", "GRPO-P001"]
    assert result.config.num_generations == 8


def test_integral_float_for_an_integer_is_a_warning_with_a_safe_fix():
    diag = only(check("num_generations: 4.0"), "GRPO-T004")
    assert diag.severity == "warning" and diag.fix.set == {"num_generations": 4} and diag.fix.safe


def test_numeric_log_level_is_a_warning_with_the_name_as_fix():
    result = check("log_level: 20")
    diag = only(result, "GRPO-T009")
    assert diag.fix.set == {"log_level": "info"} and result.config.log_level == "info"


def test_did_you_mean_for_choices_and_percentages():
    assert only(check("optim: adamw_8bitt"), "GRPO-T003").hint == "did you mean adamw_8bit?"
    diag = only(check("vllm_gpu_memory_utilization: 70"), "GRPO-T002")
    assert diag.fix.set == {"vllm_gpu_memory_utilization": 0.7} and not diag.fix.safe


def test_datasets_entries_are_typed_and_positioned():
    result = check("datasets:\n  - path: a\n    split: train\n  - name: b\n  - path: c\n    colums: [x]\n")
    missing = only(result, "GRPO-T005")
    assert missing.fields == ("datasets[1].path",) and missing.line == 4
    unknown = only(result, "GRPO-K007")
    assert unknown.fields == ("datasets[2].colums",) and unknown.line == 6
    assert check("datasets:\n  - path: a\n").config.datasets[0].path == "a"


def test_the_config_is_frozen():
    config = check("num_generations: 4").config
    with pytest.raises(TypeError):
        config.num_generations = 8


def test_no_field_name_shadows_a_config_view_attribute():
    """ConfigView keeps the fields in its instance __dict__, where a field named like a method would hide it."""
    from grpo_schema.engine.view import ConfigView

    taken = set(dir(ConfigView))

    def clashes(facts: dict) -> set[str]:
        found = set(facts) & taken
        for fact in facts.values():
            found |= clashes(fact["nested"]) if fact.get("nested") else set()
        return found

    for key in ("config", "launch", "open-r1"):
        assert not clashes(compiled(key).fields), key


def test_a_yaml_date_where_another_type_belongs_is_shown_as_written():
    """YAML reads `2001-01-01` as a date; the message shows it as the user wrote it, not as Python's repr."""
    result = check("learning_rate: 2001-01-01\nreward_weights: [1.0, 2024-05-06]\nrun_name: 2001-01-01\n")
    messages = {d.fields[0]: d.message for d in result.diagnostics if d.code == "GRPO-T001"}
    assert "(got the date 2001-01-01)" in messages["learning_rate"]
    assert "(got [1.0, the date 2024-05-06])" in messages["reward_weights"]
    assert "(got the date 2001-01-01)" in messages["run_name"]
    assert not any("datetime" in m for m in messages.values())

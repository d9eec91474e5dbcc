"""GRPORunConfig is the validator: every rule of the engine, pydantic's error shape, round trips through YAML."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from grpo_schema import GRPORunConfig, check_file, check_mapping, check_text
from grpo_schema.api.modelcheck import loc_of
from grpo_schema.commands.export import MODELINE_PREFIX
from grpo_schema.engine.loader import load_yaml
from tests.conftest import CORPUS, corpus_files

FIXTURES = Path(__file__).parent / "data" / "model_api"


def errors_of(exc: ValidationError) -> list[tuple[str, tuple, str]]:
    return [(e["type"], e["loc"], e["msg"]) for e in exc.errors()]


def engine_errors(result) -> list[tuple[str, tuple, str]]:
    return [(d.code, loc_of(d), d.message) for d in result.diagnostics if d.severity == "error"]


def test_geometry_that_trl_refuses_raises_b001():
    with pytest.raises(ValidationError) as caught:
        GRPORunConfig(num_generations=3, per_device_train_batch_size=4)
    (error,) = caught.value.errors()
    assert error["type"] == "GRPO-B001"
    assert set(error["loc"]) == {"generation_batch_size", "num_generations", "per_device_train_batch_size"}
    assert "is not a multiple of num_generations (3)" in error["msg"]
    assert error["ctx"]["hint"].startswith("smallest edits")
    assert error["ctx"]["fix"]["set"]  # a Fix as a dict
    assert error["input"] == {"num_generations": 3, "per_device_train_batch_size": 4}


def test_both_generation_settings_raise_b002():
    with pytest.raises(ValidationError) as caught:
        GRPORunConfig.model_validate({"generation_batch_size": 16, "steps_per_generation": 2})
    assert [e["type"] for e in caught.value.errors()] == ["GRPO-B002"]
    assert caught.value.errors()[0]["loc"] == ("generation_batch_size", "steps_per_generation")
    assert caught.value.title == "GRPORunConfig"


def test_every_error_at_once_in_the_engines_order():
    data = {
        "num_generations": "eight",
        "scale_rewards": "std",
        "num_generation": 8,
        "epsilon": 0.3,
        "epsilon_high": 0.1,
        "env": {"LD_PRELOAD": "x.so"},
    }
    with pytest.raises(ValidationError) as caught:
        GRPORunConfig.model_validate(data)
    assert errors_of(caught.value) == engine_errors(check_mapping(data))
    assert {e["type"] for e in caught.value.errors()} == {
        "GRPO-K001",
        "GRPO-T001",
        "GRPO-T003",
        "GRPO-L001",
        "GRPO-E003",
    }
    by_type = {e["type"]: e for e in caught.value.errors()}
    assert by_type["GRPO-E003"]["loc"] == ("env", "LD_PRELOAD")
    assert by_type["GRPO-K001"]["ctx"]["hint"] == "did you mean num_generations?"


def test_world_size_comes_from_the_context_else_num_processes_else_one():
    data = {"per_device_train_batch_size": 3, "num_generations": 4, "steps_per_generation": 2}
    with pytest.raises(ValidationError, match="GRPO-B001"):
        GRPORunConfig.model_validate(data)
    config = GRPORunConfig.model_validate(data, context={"world_size": 2})
    assert config.world_size == 2 and config.plan.generation_batch_size == 12
    from_file = GRPORunConfig.model_validate({**data, "num_processes": 2})
    assert from_file.world_size == 2 and from_file.launch == {"num_processes": 2}
    assert from_file.derive_plan(4).generation_batch_size == 24
    assert from_file.derive_plan(3) is None  # 18 completions cannot hold whole groups of 4


def test_warnings_are_on_the_instance_and_never_raise():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = GRPORunConfig(num_generations=4, vllm_importance_sampling_cap=2.0)
    codes = {d.code for d in config.diagnostics}
    assert "GRPO-D001" in codes  # the deprecated field
    assert all(d.severity != "error" for d in config.diagnostics)
    assert config.model_fields_set == {"num_generations", "vllm_importance_sampling_cap"}


def test_profiles_and_allowed_env_come_from_the_context():
    data = {"dataset_name": "org/data", "system_prompt": "Think first.", "env": {"LD_PRELOAD": "/opt/x.so"}}
    with pytest.raises(ValidationError) as caught:
        GRPORunConfig.model_validate(data)
    assert {e["type"] for e in caught.value.errors()} == {"GRPO-K006", "GRPO-E003"}
    config = GRPORunConfig.model_validate(data, context={"profiles": ["open-r1"], "allow_env": ["LD_PRELOAD"]})
    assert config.script_args["open-r1"].system_prompt == "Think first."
    assert config.env == {"LD_PRELOAD": "/opt/x.so"}
    with pytest.raises(ValidationError, match="unknown profile"):
        GRPORunConfig.model_validate({}, context={"profiles": "no-such-profile"})


def test_a_nested_config_reports_under_its_field():
    class Job(BaseModel):
        name: str
        config: GRPORunConfig

    with pytest.raises(ValidationError) as caught:
        Job.model_validate({"name": "x", "config": {"generation_batch_size": 16, "steps_per_generation": 2}})
    assert caught.value.errors()[0]["loc"] == ("config", "generation_batch_size", "steps_per_generation")
    assert caught.value.errors()[0]["type"] == "GRPO-B002"
    job = Job(name="y", config=GRPORunConfig(num_generations=4))
    assert Job.model_validate(job.model_dump()).config == job.config


def test_braces_in_a_message_are_kept_as_written():
    data = {"reward_funcs": ["{hint}"]}
    with pytest.raises(ValidationError) as caught:
        GRPORunConfig.model_validate(data)
    assert "hint}" in caught.value.errors()[0]["msg"]
    assert caught.value.errors()[0]["ctx"]["hint"] not in caught.value.errors()[0]["msg"]


def test_from_yaml_reads_text_and_paths_and_keeps_positions(tmp_path):
    text = "# a run\nnum_generations: 3\nper_device_train_batch_size: 4\n"
    with pytest.raises(ValidationError) as caught:
        GRPORunConfig.from_yaml(text)
    assert caught.value.errors()[0]["ctx"]["line"] == 2
    path = tmp_path / "run.yaml"
    path.write_text(text)
    for source in (path, str(path)):
        with pytest.raises(ValidationError) as caught:
            GRPORunConfig.from_yaml(source)
        assert errors_of(caught.value) == engine_errors(check_file(path))
    config = GRPORunConfig.from_yaml(path, world_size=3)
    assert config.plan.generation_batch_size == 12
    assert GRPORunConfig.from_yaml(text, overrides={"num_generations": 4}).num_generations == 4
    assert GRPORunConfig.from_yaml(text, overrides=["num_generations=2"]).num_generations == 2
    with pytest.raises(ValidationError) as caught:
        GRPORunConfig.from_yaml("a: [1, 2\n")
    assert caught.value.errors()[0]["type"] == "GRPO-Y001"
    with pytest.raises(OSError):
        GRPORunConfig.from_yaml(tmp_path / "missing.yaml")


def test_to_yaml_is_a_trl_grpo_file_that_reads_back_equal():
    text = (
        "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\nlearning_rate: 1.0e-6\nreward_funcs: [accuracy_reward]\n"
        'datasets:\n  - path: trl-lib/DeepMath-103K\nnum_processes: 2\nenv:\n  HF_HUB_OFFLINE: "1"\n'
    )
    config = GRPORunConfig.from_yaml(text)
    written = config.to_yaml()
    assert written.startswith(MODELINE_PREFIX)
    data = yaml.safe_load(written)  # what `trl grpo` reads
    assert data == {
        "model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct",
        "learning_rate": 1e-6,
        "reward_funcs": ["accuracy_reward"],
        "num_processes": 2,
        "env": {"HF_HUB_OFFLINE": "1"},
        "datasets": [{"path": "trl-lib/DeepMath-103K"}],
    }  # nested: what was set, too
    again = GRPORunConfig.from_yaml(written)
    assert again == config and again.model_fields_set == config.model_fields_set
    assert again.env == config.env and again.launch == config.launch and again.to_yaml() == written
    assert not GRPORunConfig().to_yaml(modeline=False)
    full = yaml.safe_load(GRPORunConfig().to_yaml(defaults=True))
    assert len(full) == len(GRPORunConfig.model_fields)


def test_config_view_to_model_is_the_same_config():
    result = check_text("num_generations: 4\nbeta: 0.04\n")
    model = result.config.to_model()
    assert isinstance(model, GRPORunConfig) and model.model_dump() == result.config.model_dump()


def test_construction_without_the_engine_is_checked_on_first_use():
    config = GRPORunConfig.model_construct(num_generations=3)
    assert config.world_size == 1 and config.plan is None


def test_the_bases_are_the_area_classes():
    from grpo_schema.api.config import AREA_CLASSES

    assert GRPORunConfig.__bases__ == tuple(reversed(AREA_CLASSES))


# --- the corpus: the same errors through the model as through the engine --------------------------------------------


def _profiles(path: Path) -> tuple[str, ...]:
    return ("open-r1",) if "open-r1" in path.name else ()


CORPUS_FILES = corpus_files("valid") + corpus_files("invalid") + sorted(FIXTURES.glob("*.yaml"))


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_gives_the_same_errors_through_the_model(path):
    """Every corpus file (and the fixtures here, so a bare clone runs this too): model_validate of the loaded
    mapping raises exactly check_mapping's errors (or builds when there are none); from_yaml exactly the file's."""
    profiles = _profiles(path)
    loaded = load_yaml(path.read_bytes())
    if loaded.ok and isinstance(loaded.data, dict):
        expected = engine_errors(check_mapping(loaded.data, profiles=profiles))
        try:
            config = GRPORunConfig.model_validate(loaded.data, context={"profiles": profiles})
            assert expected == []
            assert all(d.severity != "error" for d in config.diagnostics)
        except ValidationError as exc:
            assert errors_of(exc) == expected
    result = check_file(path, profiles=profiles)
    try:
        GRPORunConfig.from_yaml(path, profiles=profiles)
        assert result.valid
    except ValidationError as exc:
        assert errors_of(exc) == engine_errors(result)
        assert [(e["ctx"]["line"], e["ctx"]["column"]) for e in exc.errors()] == [
            (d.line, d.column) for d in result.diagnostics if d.severity == "error"
        ]


def test_the_corpus_is_there_or_the_skip_says_why(shared_dir):
    assert len(corpus_files("valid")) >= 50 and len(corpus_files("invalid")) >= 40, CORPUS


def test_the_compiled_validator_checks_fields_only():
    """The engine validates fields with validators compiled from the model minus its engine hook: built from the
    cache or straight from the model (a stale cache), neither calls the engine (which would recurse)."""
    from grpo_schema.engine.compiled import compiled, from_model

    refused_by_rules = {"num_generations": 3, "per_device_train_batch_size": 4}
    for validator in (compiled("config"), from_model(GRPORunConfig, "config")):
        assert validator.validate(refused_by_rules)["num_generations"] == 3


def test_json_input_runs_the_same_rules():
    with pytest.raises(ValidationError) as caught:
        GRPORunConfig.model_validate_json('{"generation_batch_size": 16, "steps_per_generation": 2}')
    assert [e["type"] for e in caught.value.errors()] == ["GRPO-B002"]
    assert GRPORunConfig.model_validate_json('{"num_generations": 4}').num_generations == 4

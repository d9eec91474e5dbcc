"""The `hardware:` section in the exported JSON Schema: editors accept what `grpo plan` reads and flag the rest."""

import json
from pathlib import Path

import jsonschema
import pytest

from grpo_schema.engine.hardware.fit import SECTION_KEYS
from grpo_schema.engine.hardware.settings import STRATEGIES

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "grpo-config.schema.json").read_text())
BASE = {"model_name_or_path": "Qwen/Qwen2.5-0.5B", "dataset_name": "d", "reward_funcs": ["accuracy_reward"]}


def errors(document: dict) -> list[str]:
    validator = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)
    return [e.message for e in validator.iter_errors({**BASE, **document})]


def test_the_section_has_exactly_the_keys_grpo_plan_reads():
    mapping = next(s for s in SCHEMA["properties"]["hardware"]["anyOf"] if s.get("type") == "object")
    assert set(mapping["properties"]) == SECTION_KEYS and mapping["additionalProperties"] is False
    assert mapping["properties"]["strategy"]["enum"] == list(STRATEGIES)


@pytest.mark.parametrize(
    "section",
    [
        "8xH100-80GB",
        "80GB",
        {"spec": "2x8xA100-40GB", "strategy": "zero3", "offload_optimizer": True, "mfu": 0.4},
        {"memory_gib": 24, "peak_tflops": 165.2, "prompt_length": 512},
    ],
)
def test_what_grpo_plan_reads_is_accepted(section):
    assert errors({"hardware": section}) == []


@pytest.mark.parametrize("section", [{"spce": "8xH100-80GB"}, {"strategy": "zero4"}, {"mfu": 2}, 8])
def test_typos_and_wrong_types_are_flagged(section):
    assert errors({"hardware": section})

"""The committed schemas: fresh, valid against their metaschemas, complete and documented for every field."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from grpo_schema.api.config import GRPORunConfig
from grpo_schema.commands import export
from grpo_schema.engine.migrations import MIGRATIONS
from grpo_schema.engine.params.launch import LaunchParams
from grpo_schema.schema_export.legacy import DEPRECATED_FIELDS
from tests.editor.conftest import SCHEMAS

STRICT = "grpo-config.schema.json"
# Every keyword the export may write: standard JSON Schema, the editor extensions yaml-language-server reads, and
# our layout hints. A pydantic-only keyword (e.g. `gt`) would be ignored by every tool, so it must not slip in.
KEYWORDS = {
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "definitions",
    "title",
    "description",
    "type",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "required",
    "items",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "enum",
    "const",
    "default",
    "examples",
    "deprecated",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minProperties",
    "minLength",
    "pattern",
    "markdownDescription",
    "enumDescriptions",
    "markdownEnumDescriptions",
    "deprecationMessage",
    "errorMessage",
    "patternErrorMessage",
    "defaultSnippets",
    "x-group",
    "x-group-title",
    "x-order",
    "x-advanced",
    "x-groups",
    "x-rule",
    "x-replaced-by",
}


def load(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def keywords_of(node, found: set) -> set:
    if isinstance(node, list):
        for item in node:
            keywords_of(item, found)
    elif isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            if key in ("properties", "patternProperties", "$defs", "definitions"):
                for sub in value.values():
                    keywords_of(sub, found)
            elif key not in ("default", "examples", "enum", "const", "x-groups", "defaultSnippets"):
                keywords_of(value, found)
    return found


@pytest.mark.parametrize("name", [export.schema_filename(*spec) for spec in export.COMMITTED])
def test_schema_is_valid_against_its_metaschema_and_uses_known_keywords(name):
    schema = load(name)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    assert keywords_of(schema, set()) <= KEYWORDS
    assert ("$defs" in schema) != ("definitions" in schema)
    assert ("draft-07" in name) == ("definitions" in schema)


def test_every_field_and_launch_key_is_declared_and_documented():
    properties = load(STRICT)["properties"]
    assert set(GRPORunConfig.model_fields) | set(LaunchParams.model_fields) | {"env"} <= set(properties)
    for name, prop in properties.items():
        assert prop.get("description"), name
        assert prop["markdownDescription"].startswith(prop["description"]), name
        assert {"x-group", "x-group-title", "x-order", "x-advanced"} <= set(prop), name
        if name in GRPORunConfig.model_fields and prop.get("default") is not None:
            assert prop.get("examples"), name
    orders = [prop["x-order"] for prop in properties.values()]
    assert sorted(orders) == list(range(len(orders)))


def test_enum_fields_carry_one_description_per_value():
    properties = load(STRICT)["properties"]
    documented = {name for name, prop in properties.items() if "enumDescriptions" in json.dumps(prop)}
    must = {
        "loss_type",
        "scale_rewards",
        "vllm_importance_sampling_mode",
        "vllm_mode",
        "importance_sampling_level",
        "multi_objective_aggregation",
        "lr_scheduler_type",
        "dtype",
        "save_strategy",
        "eval_strategy",
    }
    assert must <= documented
    for name in documented:
        for node in _enum_nodes(properties[name]):
            if "enumDescriptions" in node:
                assert len(node["enumDescriptions"]) == len(node["enum"]) == len(node["markdownEnumDescriptions"])


def _enum_nodes(prop: dict) -> list[dict]:
    nodes = [prop] if "enum" in prop else []
    for branch in prop.get("anyOf", []):
        nodes += _enum_nodes(branch)
    return nodes + (_enum_nodes(prop["items"]) if isinstance(prop.get("items"), dict) else [])


def test_deprecated_renamed_and_removed_keys_carry_a_deprecation_message():
    properties = load(STRICT)["properties"]
    for name in list(DEPRECATED_FIELDS) + list(MIGRATIONS):
        assert properties[name]["deprecated"] is True, name
        assert properties[name]["deprecationMessage"], name
    for name in MIGRATIONS:  # refused like the Python validator refuses them (GRPO-K002/K003)
        assert properties[name]["not"] == {}


def test_the_open_r1_schema_types_open_r1_keys():
    properties = load("grpo-config.open-r1.schema.json")["properties"]
    assert properties["wandb_log_unique_prompts"]["type"] == "boolean"  # open-r1's own field, not the renamed one
    assert "deprecated" not in properties["wandb_log_unique_prompts"]
    assert properties["system_prompt"]["x-group"] == "profile-open-r1"


def test_the_top_level_says_what_stays_in_python_and_who_is_strict():
    strict, lenient = load(STRICT), load("grpo-config.lenient.draft-07.schema.json")
    assert "$id" not in strict, "no $id: a schema names no URL that might not exist; it is what it is read from"
    assert "stay in the Python validator" in strict["description"] and "grpo validate" in strict["description"]
    assert strict["additionalProperties"] is False and lenient["additionalProperties"] is True
    assert [group["id"] for group in strict["x-groups"]][:3] == ["model", "data", "rewards"]


def test_catalog_entry_is_schemastore_ready():
    catalog = load("catalog.json")
    (entry,) = catalog["schemas"]
    assert set(entry) >= {"name", "description", "fileMatch", "url"}
    assert all(glob.endswith((".yaml", ".yml")) for glob in entry["fileMatch"])  # the YAML LS needs the suffix
    assert entry["url"] == export.schema_filename("07", (), True) == export.schema_url("07", (), True, base="")
    assert (SCHEMAS / entry["url"]).is_file() and all((SCHEMAS / url).is_file() for url in entry["versions"].values())
    published = json.loads(export.catalog_text("https://schemas.example.org/grpo/"))["schemas"][0]
    assert published["url"] == "https://schemas.example.org/grpo/grpo-config.lenient.draft-07.schema.json"


def test_modeline_helpers():
    assert export.MODELINE == "# yaml-language-server: $schema=grpo-config.schema.json"
    once = export.with_modeline("num_generations: 8\n")
    assert once.splitlines()[0] == export.MODELINE
    assert export.with_modeline(once) == once
    assert export.with_modeline(once, "./x.json").splitlines() == [
        "# yaml-language-server: $schema=./x.json",
        "num_generations: 8",
    ]


def test_importing_grpo_schema_does_not_import_the_exporter():
    code = "import sys, grpo_schema; print(sorted(m for m in sys.modules if 'export' in m or 'json_schema' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_cli_schema_matches_the_committed_copy(tmp_path):
    from grpo_schema.cli import main

    target = tmp_path / "s.json"
    assert main(["schema", "--draft", "07", "--output", str(target)]) == 0
    assert target.read_text() == (SCHEMAS / "grpo-config.draft-07.schema.json").read_text()
    assert main(["schema", "--draft", "07", "--output", str(target), "--check"]) == 0
    assert main(["schema", "--output", str(target), "--check"]) == 1

"""Each release's schema offers that release's own values: the type its parser reads and the values its trainer
accepts (trainer.json's choices), with texts that describe them, where 1.16 reads the key differently."""

from __future__ import annotations

import json

import jsonschema
import pytest

from grpo_schema.commands.export import release_schema_text
from grpo_schema.versions import surface
from tests.conftest import REPO

RELEASES = ("0.17", "0.19", "0.22", "0.26", "1.0")


def _schema(version: str) -> dict:
    return json.loads(release_schema_text(version))


def _string_values(prop: dict) -> list[str]:
    return [v for node in [prop, *prop.get("anyOf", [])] for v in node.get("enum", []) if isinstance(v, str)]


def _accepts(schema: dict, key: str, value) -> bool:
    return jsonschema.Draft7Validator(schema["properties"][key]).is_valid(value)


@pytest.mark.parametrize("version", RELEASES)
def test_every_trainer_choice_field_offers_exactly_the_release_s_values(version):
    release = surface(version)
    properties = _schema(version)["properties"]
    assert release.choices, f"TRL {version}'s trainer facts name no choice field"
    for name, allowed in release.choices.items():
        prop = properties[name]
        assert sorted(_string_values(prop)) == sorted(allowed), (version, name)
        for node in [prop, *prop.get("anyOf", [])]:  # a text for each value, in the value's place
            for key in ("enumDescriptions", "markdownEnumDescriptions"):
                if key in node:
                    assert len(node[key]) == len(node["enum"]), (version, name, key)


def test_scale_rewards_is_a_boolean_until_0_22_then_the_named_values():
    for version in ("0.16", "0.19", "0.21"):
        schema = _schema(version)
        prop = schema["properties"]["scale_rewards"]
        assert prop["type"] == "boolean" and not _string_values(prop), version
        assert "boolean" in prop["description"] and "'batch'" not in prop["description"], version
        assert _accepts(schema, "scale_rewards", False) and not _accepts(schema, "scale_rewards", "batch")
    schema = _schema("0.22")
    prop = schema["properties"]["scale_rewards"]
    assert sorted(_string_values(prop)) == ["batch", "group", "none"]
    assert _accepts(schema, "scale_rewards", "batch") and not _accepts(schema, "scale_rewards", "sometimes")
    assert _accepts(schema, "scale_rewards", True)  # 0.22 reads true / false as 'group' / 'none', as 1.16 does
    assert "'batch'" in prop["description"]


def test_loss_type_values_follow_the_release():
    assert not _accepts(_schema("0.19"), "loss_type", "dapo")
    assert _accepts(_schema("0.22"), "loss_type", "dapo") and not _accepts(_schema("0.22"), "loss_type", "cispo")
    assert _accepts(_schema("0.26"), "loss_type", "cispo")


@pytest.mark.parametrize("version", ("0.19", "0.22"))
def test_the_committed_schema_is_the_generator_s(version):
    name = f"trl-{surface(version).release}"
    committed = json.loads((REPO / "schemas" / name / "grpo-config.schema.json").read_text(encoding="utf-8"))
    assert committed == _schema(version)


@pytest.mark.parametrize("version", ("0.14", "0.16", "0.19", "0.23", "1.8"))
def test_every_table_value_list_is_the_release_s_own(version):
    """optim, lr_scheduler_type and every other key whose table lists its values (the enums of the release's
    transformers) offer exactly those values, and the texts of the values they lack are gone."""
    release = surface(version)
    schema = _schema(version)
    listed = {n: i.choices for n, i in release.fields.items() if i.choices and n not in release.choices}
    assert {"optim", "lr_scheduler_type"} <= set(listed)
    for name, allowed in listed.items():
        prop = schema["properties"][name]
        assert sorted(_string_values(prop)) == sorted(v for v in allowed if isinstance(v, str)), (version, name)
        for value in allowed:
            assert _accepts(schema, name, value), (version, name, value)
        lacking = set(
            _string_values(
                json.loads((REPO / "schemas" / "grpo-config.schema.json").read_text())["properties"].get(name, {})
            )
        ) - set(allowed)
        for value in lacking:
            assert not _accepts(schema, name, value), (version, name, value)
            assert f"- `{value}`:" not in prop.get("markdownDescription", ""), (version, name, value)
    assert _accepts(_schema("0.14"), "optim", "adamw_hf") and not _accepts(_schema("0.16"), "optim", "adamw_hf")
    assert not _accepts(_schema("0.16"), "lr_scheduler_type", "cosine_warmup_with_min_lr")

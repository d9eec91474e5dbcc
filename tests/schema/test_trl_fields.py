"""Field coverage against the live TRL 1.16 dataclasses of the `trl grpo` parser (a test-only oracle)."""

from __future__ import annotations

import dataclasses
import enum

import pytest

trl = pytest.importorskip("trl", reason="TRL 1.16 is a test-only oracle (pip install -e '.[test]')")

from grpo_schema.engine.compiled import compiled  # noqa: E402

pytestmark = pytest.mark.oracle


def _default(field: dataclasses.Field):
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "<required>"
    return value.value if isinstance(value, enum.Enum) else value


def _trl_classes():
    from trl import GRPOConfig, ModelConfig
    from trl.scripts.grpo import GRPOScriptArguments
    from trl.scripts.utils import DatasetMixtureConfig

    return GRPOConfig, GRPOScriptArguments, ModelConfig, DatasetMixtureConfig


def test_every_parser_field_exists_with_trls_default():
    facts = compiled("config").fields
    seen = set()
    for cls in _trl_classes():
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            seen.add(field.name)
            assert field.name in facts, f"{cls.__name__}.{field.name} is missing"
            ours, theirs = facts[field.name]["default"], _default(field)
            assert ours == theirs or (theirs is None and ours == []), (field.name, ours, theirs)
    assert seen == set(facts), f"fields TRL's parser does not have: {set(facts) - seen}"


def test_dataset_entries_match_trls_dataset_config():
    from trl.scripts.utils import DatasetConfig

    entry = compiled("config").fields["datasets"]["nested"]
    assert {f.name: _default(f) for f in dataclasses.fields(DatasetConfig)} == {
        name: ("<required>" if name == "path" else fact["default"]) for name, fact in entry.items()
    }


def test_choices_cover_trls_and_the_surface_has_228_fields():
    facts = compiled("config").fields
    entry_facts = facts["datasets"]["nested"]
    from trl.scripts.utils import DatasetConfig

    classes = [*_trl_classes(), DatasetConfig]
    count = 0
    for cls in classes:
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            count += 1
            ours = entry_facts[field.name] if cls is DatasetConfig else facts[field.name]
            # reward_funcs names are checked by GRPO-R002 against the registry in force (TRL's, a profile's), not
            # a fixed choice list: dotted import paths are valid too. fsdp and debug take space-separated options.
            choices = field.metadata.get("choices") or []
            if choices and field.name not in ("reward_funcs", "fsdp", "debug"):
                wanted = {c.value if isinstance(c, enum.Enum) else c for c in choices}
                assert {c for c in wanted if isinstance(c, str)} <= set(ours["choices"]), field.name
    assert count == len(facts) + len(entry_facts) == 228

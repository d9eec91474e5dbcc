"""A deprecation belongs to the releases that have it (trainer.json, read from each release's source), and what a
release's schema and check say about a key names no key, and no deprecation, that release lacks."""

from __future__ import annotations

import json
import re

import pytest

from grpo_schema.engine.release_texts import known_keys
from grpo_schema.versions import surface
from tests.conftest import REPO
from tests.support.cli import grpo

SCHEMAS = sorted((REPO / "schemas").glob("trl-*/grpo-config.schema.json"))
KEYISH = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.parent.name for p in SCHEMAS])
def test_a_release_schema_names_only_its_own_keys_and_deprecations(path):
    schema = json.loads(path.read_text())
    release = surface(schema["x-trl-release"])
    lacking = known_keys() - set(release.fields)
    for name, prop in schema["properties"].items():
        values = {v for v in prop.get("enum", []) if isinstance(v, str)}  # a value may share a key's name
        named = {t for text in _strings(prop) for t in KEYISH.findall(text)} - values
        assert not named & lacking, (name, sorted(named & lacking))
        said = " ".join(_strings({k: prop.get(k) for k in ("description", "markdownDescription")}))
        if name in release.deprecations:
            assert prop["deprecated"] is True and f"deprecated in TRL {release.release}" in prop["deprecationMessage"]
            use = release.deprecations[name]
            assert use is None or (use in release.fields and use in prop["deprecationMessage"])
        else:
            assert "deprecated" not in prop and "deprecationMessage" not in prop, name
            assert not re.search(r"(^|\. )(Deprecated|Older name)|deprecated alias", said), (name, said)
    assert len(SCHEMAS) >= 20


def test_the_deprecations_are_the_releases_own():
    """gradient_checkpointing from transformers 5.23 (TRL 1.16's; each earlier release is read with the transformers
    of its date, 5.19 at the latest), use_transformers_paged from 1.2 (with a key to use from 1.7),
    vllm_importance_sampling_cap from 1.6; the engine's GRPO-D rules are 1.16's deprecations."""
    assert "gradient_checkpointing" not in surface("0.29").deprecations  # transformers 5.3
    assert "gradient_checkpointing" not in surface("1.15").deprecations  # transformers 5.19
    assert surface("1.16").deprecations["gradient_checkpointing"] == "activation_checkpointing"
    assert "use_transformers_paged" not in surface("1.0").deprecations
    assert surface("1.6").deprecations["use_transformers_paged"] is None
    assert surface("1.8").deprecations["use_transformers_paged"] == "use_transformers_continuous_batching"
    assert "vllm_importance_sampling_cap" not in surface("0.23").deprecations
    assert surface("0.26").deprecations["max_prompt_length"] is None
    from grpo_schema.schema_export.legacy import DEPRECATED_FIELDS

    assert set(surface("1.16").deprecations) == set(DEPRECATED_FIELDS) - {"local_rank"}
    for version in ("0.19", "0.26", "1.6", "1.16"):
        table = surface(version)
        assert all(use is None or use in table.fields for use in table.deprecations.values()), version


RECIPE = """model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
per_device_train_batch_size: 8
num_generations: 8
gradient_checkpointing: true
use_transformers_paged: true
"""


def test_validate_says_a_deprecation_only_for_the_releases_that_have_it(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(RECIPE)

    def said(version, text=RECIPE):
        path.write_text(text)
        done = grpo("validate", "--format", "json", str(path), "--trl-version", version, cwd=REPO)
        return {
            d["fields"][0]: d
            for d in json.loads(done.stdout)["files"][0]["diagnostics"]
            if d["code"].startswith("GRPO-D")
        }

    assert said("0.19") == {}  # 0.19 reads gradient_checkpointing and no activation_checkpointing: nothing to rename
    old = said("1.6")  # 1.6 deprecates use_transformers_paged with no key to use instead
    assert old["use_transformers_paged"]["fix"] is None
    assert "use_transformers_continuous_batching" not in json.dumps(old["use_transformers_paged"])
    # 1.6's transformers (5.11) has no activation_checkpointing: gradient_checkpointing is the key it reads
    assert "gradient_checkpointing" not in old
    new = said("1.8")
    assert new["use_transformers_paged"]["fix"]["rename"] == {
        "use_transformers_paged": "use_transformers_continuous_batching"
    }
    own = said(
        "0.26",
        RECIPE.replace(
            "gradient_checkpointing: true\nuse_transformers_paged: true\n", "wandb_log_unique_prompts: true\n"
        ),
    )
    assert own["wandb_log_unique_prompts"]["code"] == "GRPO-D006"
    assert own["wandb_log_unique_prompts"]["fix"]["rename"] == {"wandb_log_unique_prompts": "log_unique_prompts"}


def test_a_deprecated_key_the_release_parses_and_never_uses_is_said_to_have_no_effect(tmp_path):
    """0.16-0.17 parse vllm_device and the other vllm_* keys of the in-trainer engine but start vLLM only as a
    separate server (`trl vllm-serve`); 0.26-0.27 parse max_prompt_length and truncate nothing: each warns, and
    the setting does nothing else. "Keep it for that release" would keep a no-op; the fix removes it."""
    from grpo_schema.engine.check import check_mapping

    def d006(release, **settings):
        result = check_mapping({"model_name_or_path": "m", "dataset_name": "d", **settings}, trl_version=release)
        return [d for d in result.diagnostics if d.code == "GRPO-D006"]

    assert surface("0.16").unused >= {"vllm_device", "vllm_gpu_memory_utilization", "vllm_max_model_len"}
    assert surface("0.26").unused == {"max_prompt_length"} and not surface("0.15").unused
    [found] = d006("0.16.1", use_vllm=True, vllm_device="cuda:7")
    assert "no longer uses it: the setting has no effect" in found.message
    assert "keep it" not in found.hint and found.fix is not None and found.fix.unset == ("vllm_device",)
    [found] = d006("0.26.2", max_prompt_length=4096)
    assert "no effect" in found.message
    assert d006("0.15.2", use_vllm=True, vllm_device="cuda:7") == []  # 0.15's trainer runs vLLM on that device


def test_a_boolean_before_named_values_is_described_as_the_boolean_it_was():
    """scale_rewards is a boolean up to 0.21: its 0.19 schema does not describe 1.16's 'group' / 'batch' / 'none'."""

    def said(release):
        schema = json.loads((REPO / "schemas" / f"trl-{release}" / "grpo-config.schema.json").read_text())
        prop = schema["properties"]["scale_rewards"]
        return prop.get("type"), prop["description"] + prop["markdownDescription"]

    kind, text = said("0.19.1")
    assert kind == "boolean" and "'batch'" not in text and "boolean" in text and "**Default:** `true`" in text
    assert "'batch'" in said("1.8.0")[1]

"""The committed per-release tables: parsing, lookup, the facts they must hold, reproducibility, and agreement
with the 1.16 facts grpo_schema already carries."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
import warnings
from pathlib import Path

import pytest

from grpo_schema.versions import NewerThanTablesWarning, VersionError, diff, newest, parse_version, releases, surface
from grpo_schema.versions.tables import RELEASES_DIR

ROOT = Path(__file__).resolve().parents[2]


# --- parsing ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.19.1", (0, 19, 1)),
        ("0.19", (0, 19, 0)),
        ("v1.16.0", (1, 16, 0)),
        ("1.16.0rc1", (1, 16, 0)),
        ("0.23.0.dev0", (0, 23, 0)),
        (" 0.14.0 ", (0, 14, 0)),
        ((0, 19, 1), (0, 19, 1)),
        ((1, 8), (1, 8, 0)),
    ],
)
def test_parse_version(text, expected):
    assert parse_version(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "1", "0.19.x", "trl==0.19", None, (0, -1, 0)])
def test_unparseable_versions_say_what_is_expected(text):
    with pytest.raises(VersionError, match="not a TRL version"):
        parse_version(text)


def test_versions_before_grpo_name_the_supported_range():
    with pytest.raises(VersionError, match=r"0\.14\.0 to 1\.16\.0"):
        parse_version("0.13.0")


def test_newer_versions_warn_and_use_the_newest_table():
    with pytest.warns(NewerThanTablesWarning, match="newer than the newest table"):
        assert parse_version("2.1") == (2, 1, 0)
    with pytest.warns(NewerThanTablesWarning):
        assert surface("1.17.0").release == newest() == "1.16.0"


def test_covered_releases():
    covered = releases()
    minors = {".".join(r.split(".")[:2]) for r in covered}
    assert {f"0.{m}" for m in range(14, 30)} <= minors
    assert {f"1.{m}" for m in range(0, 17)} <= minors
    assert covered[0] == "0.14.0" and covered[-1] == "1.16.0"
    assert covered == sorted(covered, key=parse_version)


def test_lookup_uses_the_minor_then_the_nearest_release_below():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert surface("0.19.0").release == "0.19.1"  # same minor: the last patch's table
        assert surface("0.16").release == "0.16.1"
        assert surface((1, 12, 0)).release == "1.11.0"  # 1.11-1.12 read the same keys: one table
        assert "1.3.0" in surface("1.3").releases


# --- the facts (one assertion each) -------------------------------------------------------------------------------


def F(version, name):
    return surface(version).fields[name]


def test_loss_type_absent_in_016():
    assert "loss_type" not in surface("0.16")


def test_loss_type_bnpo_in_019():
    assert F("0.19", "loss_type").default == "bnpo"


def test_loss_type_dapo_from_023():
    assert F("0.23", "loss_type").default == "dapo"
    assert F("1.16", "loss_type").default == "dapo"


def test_beta_004_in_016():
    assert F("0.16", "beta").default == 0.04


def test_beta_0_from_019():
    assert F("0.19", "beta").default == 0.0
    assert F("1.16", "beta").default == 0.0


def test_vllm_mode_absent_in_016():
    assert "vllm_mode" not in surface("0.16")


def test_vllm_mode_server_019_to_029():
    assert [F(v, "vllm_mode").default for v in ("0.19", "0.23", "0.29")] == ["server"] * 3


def test_vllm_mode_colocate_from_1x():
    assert F("1.0", "vllm_mode").default == "colocate"
    assert F("1.16", "vllm_mode").default == "colocate"


def test_temperature_09_then_10_from_019():
    assert F("0.16", "temperature").default == 0.9
    assert F("0.19", "temperature").default == 1.0


def test_gradient_checkpointing_on_from_023():
    assert F("0.19", "gradient_checkpointing").default is False
    assert F("0.23", "gradient_checkpointing").default is True
    assert F("0.23", "gradient_checkpointing").overrides == "TrainingArguments"


def test_max_completion_length_256_then_512_in_116():
    assert F("0.19", "max_completion_length").default == 256
    assert F("1.8", "max_completion_length").default == 256
    assert F("1.16", "max_completion_length").default == 512


def test_scale_rewards_bool_up_to_019():
    assert F("0.19", "scale_rewards").type == "bool"
    assert F("0.19", "scale_rewards").default is True


def test_scale_rewards_string_from_023_with_bool_mapping():
    f = F("0.23", "scale_rewards")
    assert (f.type, f.default) == ("str", "group")
    assert f.post_init is not None and "'group'" in f.post_init and "'none'" in f.post_init


def test_max_prompt_length_read_up_to_023_unknown_from_029():
    assert "max_prompt_length" in surface("0.23")
    assert "max_prompt_length" not in surface("0.29")


def test_torch_dtype_and_dtype_both_in_023_only_dtype_from_029():
    assert {"torch_dtype", "dtype"} <= set(surface("0.23").fields)
    assert "dtype" in surface("0.29") and "torch_dtype" not in surface("0.29")


def test_vllm_device_in_016_not_019():
    assert "vllm_device" in surface("0.16")
    assert "vllm_device" not in surface("0.19")


@pytest.mark.parametrize(
    "name",
    [
        "importance_sampling_level",
        "top_entropy_quantile",
        "use_transformers_paged",
        "vllm_importance_sampling_correction",
    ],
)
def test_read_from_023_not_019(name):
    assert name in surface("0.23") and name not in surface("0.19")


def test_use_liger_loss_in_019_and_023_only():
    assert [("use_liger_loss" in surface(v)) for v in ("0.16", "0.19", "0.23", "0.29")] == [False, True, True, False]


def test_016_script_arguments_know_no_reward_funcs_and_require_dataset_name():
    assert "reward_funcs" not in surface("0.16")
    assert F("0.16", "dataset_name").required


def test_unknown_keys_per_release():
    fe = {v: surface(v).front_end for v in ("0.16", "0.19", "0.23", "0.29", "1.16")}
    assert not fe["0.16"].reads_config and fe["0.16"].unknown_keys == "no_config"
    assert (
        fe["0.19"].unknown_keys == "error" and "Unknown arguments from config file" in fe["0.19"].unknown_keys_message
    )
    assert fe["0.23"].unknown_keys == "ignored"
    assert fe["0.29"].unknown_keys == "accelerate" and "unrecognized arguments" in fe["0.29"].unknown_keys_message
    assert fe["1.16"].unknown_keys == "accelerate"


def test_choice_values_are_not_checked_at_parse_time():
    assert F("0.19", "loss_type").choices is None  # plain `str`: `loss_type: bogus` parses
    assert F("1.16", "loss_type").type == "str"


def test_batch_divisibility_checked_at_parse_time_from_019():
    assert not surface("0.16").front_end.batch_divisibility_at_parse
    assert all(surface(v).front_end.batch_divisibility_at_parse for v in ("0.19", "0.23", "0.29", "1.16"))


def test_bf16_default_computed_after_parsing_from_019():
    f = F("0.19", "bf16")
    assert f.default is None and f.post_init and "fp16" in f.post_init and f.base_default is False


# --- diff ---------------------------------------------------------------------------------------------------------


def test_diff_019_to_116():
    d = diff("0.19", "1.16")
    assert ("torch_dtype", "dtype") in d.renamed
    assert "max_prompt_length" in d.removed and "vllm_importance_sampling_correction" in d.added
    changed = {c.name: (c.old, c.new) for c in d.defaults_changed}
    assert changed["loss_type"] == ("bnpo", "dapo")
    assert changed["vllm_mode"] == ("server", "colocate")
    assert changed["gradient_checkpointing"] == (False, True)
    assert changed["max_completion_length"] == (256, 512)
    assert "beta" not in changed
    assert d.explicit_defaults()["loss_type"] == "bnpo"
    assert "scale_rewards" in {c.name for c in d.types_changed}


def test_diff_016_to_019_writes_beta_temperature_and_bf16_out():
    explicit = diff("0.16", "0.19").explicit_defaults()
    assert explicit["beta"] == 0.04 and explicit["temperature"] == 0.9 and explicit["bf16"] is False
    assert "dataset_name" not in explicit  # required in 0.16: nothing to carry


def test_diff_backwards_renames_back():
    assert ("dtype", "torch_dtype") in diff("1.16", "0.19").renamed


def test_diff_of_one_table_is_empty():
    d = diff("1.3", "1.4")
    assert not (d.added or d.removed or d.renamed or d.defaults_changed)


# --- the data itself ----------------------------------------------------------------------------------------------


def test_tables_are_compact_sorted_json():
    for path in RELEASES_DIR.glob("*.json"):
        text = path.read_text()
        data = json.loads(text)
        assert text == json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n", path.name
    index = json.loads((RELEASES_DIR / "index.json").read_text())
    assert {e["file"] for e in index["releases"]} == {p.name for p in RELEASES_DIR.glob("*.json")} - {
        "index.json",
        "requirements.json",
        "trainer.json",
    }
    requirements = json.loads((RELEASES_DIR / "requirements.json").read_text())["releases"]
    assert sorted(requirements) == sorted(e["release"] for e in index["releases"])


def _script():
    spec = importlib.util.spec_from_file_location("trl_releases", ROOT / "scripts" / "trl_releases.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("trl_releases", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def regenerated() -> dict[str, str]:
    """Every file scripts/trl_releases.py writes, regenerated once from the cached wheels for the tests that compare
    them. Each release's parser surface is read once: the trainer facts read it again otherwise (half the time)."""
    script = _script()
    missing = [
        p
        for v, tf in script.RELEASES.items()
        for p in (
            script.CACHE / f"trl-{v}-py3-none-any.whl",
            script.CACHE / "transformers" / f"transformers-{tf}-py3-none-any.whl",
        )
        if not p.exists()
    ]
    if missing:
        pytest.skip(f"{len(missing)} wheels not cached under {script.CACHE} (run scripts/trl_releases.py once)")
    script.surface = functools.cache(script.surface)  # a pure function of the cached wheels; its tables only read
    return script.build(offline=True)


@pytest.mark.slow  # parses every cached release wheel: half a minute on 2 cores
def test_committed_tables_equal_a_regeneration_from_the_cached_wheels(regenerated):
    committed = {p.name: p.read_text() for p in RELEASES_DIR.glob("*.json")}
    assert sorted(regenerated) == sorted(committed)
    assert [n for n in regenerated if regenerated[n] != committed[n]] == []


def test_committed_requirements_equal_a_regeneration_from_the_cached_trl_wheels():
    """requirements.json (what `grpo doctor` judges environments against) is what each release's wheel declares."""
    script = _script()
    missing = [v for v in script.RELEASES if not (script.CACHE / f"trl-{v}-py3-none-any.whl").exists()]
    if missing:
        pytest.skip(f"{len(missing)} trl wheels not cached under {script.CACHE} (run scripts/trl_releases.py once)")
    assert script.requirements_file(offline=True) == (RELEASES_DIR / "requirements.json").read_text()
    table = json.loads((RELEASES_DIR / "requirements.json").read_text())["releases"]
    assert "vllm<=0.31.0,>=0.22.0" in table["1.16.0"]["extras"]["vllm"]
    assert table["0.15.2"]["vllm_serve"] is False and table["0.16.1"]["vllm_serve"] is True


@pytest.mark.slow  # shares the regeneration above
def test_committed_trainer_facts_equal_a_regeneration_from_the_cached_trl_wheels(regenerated):
    """trainer.json (the values each release's trainer accepts) is read from each release's own trainer source."""
    assert regenerated["trainer.json"] == (RELEASES_DIR / "trainer.json").read_text()


def test_each_releases_script_registers_its_own_reward_names():
    """`trl grpo` resolves by name only what its trl/scripts/grpo.py registers: none before 0.18 (a reward model
    only), think_format_reward alone up to 0.21, then get_soft_overlong_punishment, accuracy_reward (0.24) and
    reasoning_accuracy_reward (0.26); 1.16's four are the engine's own."""
    from grpo_schema.engine.check import TRL_REWARD_FUNCS

    facts = json.loads((RELEASES_DIR / "trainer.json").read_text())["releases"]
    assert facts["0.17.0"]["reward_funcs"] == []
    assert facts["0.19.1"]["reward_funcs"] == ["think_format_reward"]
    assert facts["0.22.2"]["reward_funcs"] == ["think_format_reward", "get_soft_overlong_punishment"]
    assert "accuracy_reward" in facts["0.24.0"]["reward_funcs"] and len(facts["0.24.0"]["reward_funcs"]) == 3
    assert sorted(facts["1.16.0"]["reward_funcs"]) == sorted(TRL_REWARD_FUNCS)
    assert surface("0.19").reward_funcs == ("think_format_reward",)
    script = _script()  # what the table script reads from a release's source: the registry's keys, in its order
    assert script.source_reward_names("def main():\n    reward_funcs_registry = {'a': f, \"b\": g(1)}\n") == ["a", "b"]
    assert script.source_reward_names("x = 1\n") == [] and script.source_reward_names("") == []


def test_trainer_choices_per_release():
    """0.19's trainer raises 'Unknown loss type' past grpo, bnpo and dr_grpo; the set grew release by release; the
    releases that share a parser table share their trainer's choices (the table carries them)."""
    facts = json.loads((RELEASES_DIR / "trainer.json").read_text())["releases"]
    assert facts["0.16.1"]["choices"] == {}  # no loss_type yet
    assert facts["0.19.1"]["choices"]["loss_type"] == ["bnpo", "dr_grpo", "grpo"]
    assert facts["0.23.1"]["choices"]["loss_type"] == ["bnpo", "dapo", "dr_grpo", "grpo"]
    assert "luspo" in facts["0.28.0"]["choices"]["loss_type"] and "vespo" not in facts["0.28.0"]["choices"]["loss_type"]
    assert len(facts["1.16.0"]["choices"]["loss_type"]) == 8
    assert facts["0.20.0"]["choices"]["importance_sampling_level"] == ["sequence", "token"]
    assert facts["0.23.1"]["choices"]["scale_rewards"] == ["batch", "group", "none"]
    index = json.loads((RELEASES_DIR / "index.json").read_text())["releases"]
    for entry in index:
        table = surface(entry["release"])
        assert dict(table.choices) == {k: tuple(v) for k, v in facts[entry["release"]]["choices"].items()}, entry


def test_the_source_reader_takes_only_unconditional_checks():
    script = _script()
    source = (
        "def f(self):\n"
        "    if self.use_liger and self.loss_type != 'bnpo':\n        raise ValueError\n"
        "    if self.use_liger:\n        if self.loss_type != 'bnpo':\n            raise ValueError\n"
        "    if self.loss_type == 'grpo':\n        a = 1\n    elif self.loss_type in ['bnpo', 'dr_grpo']:\n        a = 2\n"
        "    else:\n        raise ValueError('Unknown loss type')\n"
        "    if self.mode == 'a':\n        a = 1\n    elif self.mode == 'b':\n        a = 2\n"  # no raise: no fact
        "    if self.level not in ('token', 'sequence'):\n        raise ValueError\n"
    )
    assert script.source_choices(source) == {"loss_type": ["bnpo", "dr_grpo", "grpo"], "level": ["sequence", "token"]}


# --- 1.16 against grpo_schema's committed facts (read-only) -------------------------------------------------------

# Where the 1.16 table and grpo_schema's facts differ, and why (the table records the dataclass default; the
# validator the value a run gets on its supported environment).
KNOWN_1_16_DIFFERENCES = {
    # transformers 5.24 sets default_optim = "adamw_torch_fused" under `if is_torch_greater_or_equal_than_2_8`
    "optim": ("adamw_torch", "adamw_torch_fused")
}


def test_116_table_agrees_with_grpo_schema_facts():
    from grpo_schema.compiled import compiled

    facts = compiled("config").fields
    table = surface("1.16").fields
    assert sorted(set(facts) - set(table)) == []
    assert sorted(set(table) - set(facts)) == []
    differences = {}
    for name in sorted(set(facts) & set(table)):
        ours, theirs = table[name].default, facts[name].get("default")
        if ours != theirs or type(ours) is not type(theirs):
            differences[name] = (ours, theirs)
    assert differences == KNOWN_1_16_DIFFERENCES
    assert ("is_torch_greater_or_equal_than_2_8", "adamw_torch_fused") in table["optim"].default_when

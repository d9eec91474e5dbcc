"""The form's file endpoints over real HTTP: YAML export, import, presets, and the CLI agreeing with the export."""

from __future__ import annotations

import json

import pytest

from grpo_schema import check_mapping, check_text
from grpo_schema.commands.export import modeline, schema_url
from grpo_schema.engine.loader import load_yaml
from grpo_web.presets import PRESET_DIR as EXAMPLES
from grpo_web.presets import all_presets
from tests.support.cli import grpo


@pytest.fixture(scope="module")
def http(live_server):
    with live_server.client() as client:
        yield client


def diagnostics_without_positions(result) -> list[dict]:
    """Diagnostics minus what only a text has: positions, origin, and their line order."""
    return sorted(
        ({k: v for k, v in d.to_dict().items() if k not in ("line", "column", "origin")} for d in result.diagnostics),
        key=lambda d: json.dumps(d, sort_keys=True),
    )


def test_export_writes_the_modeline_first_and_keeps_the_order(http, live_server):
    mapping = {"num_generations": 4, "reward_funcs": ["accuracy_reward"], "learning_rate": 1e-6, "beta": 0.0}
    response = http.post("/api/v1/yaml", json=mapping)
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/yaml")
    first, *rest = response.text.splitlines()
    assert first == modeline(schema_url())  # what the CLI writes
    assert [line.split(":")[0] for line in rest if not line.startswith(" ")] == list(mapping)
    assert load_yaml(response.text).data == mapping
    with_profile = http.post("/api/v1/yaml", json=mapping, params={"profile": "open-r1"}).text
    assert with_profile.splitlines()[0] == modeline(schema_url(profiles=["open-r1"]))


@pytest.mark.parametrize(
    "mapping",
    [
        {"num_generations": 3, "learning_rate": "1e-6", "seed": "42", "report_to": "none", "bf16": "no"},
        {
            "system_prompt": "line one\nline two\n",
            "chat_template": "{% for m in messages %}{{ m }}{% endfor %}",
            "env": {"HF_HOME": "/tmp/hf", "NCCL_DEBUG": "INFO"},
            "model_init_kwargs": {"dtype": "bfloat16"},
        },
        {"datasets": [{"path": "a/b", "split": "train"}], "reward_weights": [1.0, 0.5], "num_generation": 8},
    ],
)
def test_exported_yaml_validates_like_the_mapping(http, mapping):
    text = http.post("/api/v1/yaml", json=mapping).text
    assert diagnostics_without_positions(check_text(text)) == diagnostics_without_positions(check_mapping(mapping))


def test_exported_yaml_passes_the_cli(http, tmp_path):
    preset = http.get("/api/v1/presets/dapo").json()
    path = tmp_path / "exported.yaml"
    path.write_text(http.post("/api/v1/yaml", json=preset["config"]).text)
    done = grpo("validate", str(path))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("body,status", [(b"[1]", 422), (b"{bad", 422), (b"a: 1", 415)])
def test_export_refuses_what_is_not_a_json_object(http, body, status):
    content_type = "text/yaml" if status == 415 else "application/json"
    assert http.post("/api/v1/yaml", content=body, headers={"content-type": content_type}).status_code == status


def test_load_reads_a_file_into_the_mapping_with_the_files_own_notes(http):
    response = http.post(
        "/api/v1/load",
        content=b"num_generations: 4\nbeta: 0.1\nbeta: 0.2\n",
        headers={"content-type": "application/yaml"},
    )
    body = response.json()
    assert body["config"] == {"num_generations": 4, "beta": 0.2}
    assert [d["code"] for d in body["diagnostics"]] == ["GRPO-Y003"] and body["diagnostics"][0]["line"] == 3


@pytest.mark.parametrize("text", [b"a: [1,\n", b"- a\n- b\n", b""])
def test_load_of_something_without_a_mapping_says_why(http, text):
    body = http.post("/api/v1/load", content=text, headers={"content-type": "text/plain"}).json()
    assert body["config"] is None and body["diagnostics"][0]["severity"] == "error"


def test_load_of_an_accelerate_config_or_an_sft_recipe_says_what_it_is_instead_of_filling_the_form(http):
    from tests.support.configs import ACCELERATE, GRPO_RECIPE, SFT

    for path, kind in ((ACCELERATE, "an accelerate config"), (SFT, "an SFT config")):
        body = http.post("/api/v1/load", content=path.read_bytes(), headers={"content-type": "text/yaml"}).json()
        assert body["config"] is None, path  # the form shows the note (files.js) and keeps what it had
        assert [(d["code"], d["severity"]) for d in body["diagnostics"]] == [("GRPO-Y016", "info")]
        assert f"not a GRPO config: {kind}" in body["diagnostics"][0]["message"]
    body = http.post("/api/v1/load", content=GRPO_RECIPE.read_bytes(), headers={"content-type": "text/yaml"}).json()
    assert body["config"] == load_yaml(GRPO_RECIPE.read_bytes()).data and body["diagnostics"] == []


def test_load_of_a_corpus_file_gives_its_mapping(http, corpus):
    path = next((corpus / "valid").glob("*.yaml"))
    body = http.post("/api/v1/load", content=path.read_bytes(), headers={"content-type": "text/yaml"}).json()
    assert body["config"] == load_yaml(path.read_bytes()).data


def test_presets_are_the_example_recipes(http):
    listed = {p["name"]: p for p in http.get("/api/v1/presets").json()}
    assert set(listed) == {path.stem for path in EXAMPLES.glob("*.yaml")}
    assert {"dapo", "dr-grpo", "gspo", "grpo", "demo", "open-r1"} <= set(listed)
    assert all(p["title"] and p["description"] for p in listed.values())
    assert listed["open-r1"]["profile"] == "open-r1" and listed["dapo"]["profile"] is None
    assert http.get("/api/v1/presets/nope").status_code == 404


@pytest.mark.parametrize("name", sorted(all_presets()))
def test_each_preset_validates_clean_at_its_world_size(http, name):
    preset = http.get(f"/api/v1/presets/{name}").json()
    assert preset["yaml"].startswith("# yaml-language-server: $schema=../schemas/grpo-config.")
    world_size = preset["config"]["num_processes"]
    profiles = [preset["profile"]] if preset["profile"] else []
    for result in (check_text(preset["yaml"], profiles=profiles), check_mapping(preset["config"], profiles=profiles)):
        assert result.world_size == world_size
        assert [d.code for d in result.diagnostics if d.severity != "info"] == [], name
    params = {"world_size": world_size, **({"profile": preset["profile"]} if profiles else {})}
    over_http = http.post("/api/v1/validate", json=preset["config"], params=params).json()
    assert over_http["valid"] and [d for d in over_http["diagnostics"] if d["severity"] != "info"] == []


def test_presets_differ_where_the_recipes_differ(http):
    config = {name: http.get(f"/api/v1/presets/{name}").json()["config"] for name in all_presets()}
    assert config["dapo"]["loss_type"] == "dapo" and config["dapo"]["epsilon_high"] > config["dapo"]["epsilon"]
    assert config["dr-grpo"]["loss_type"] == "dr_grpo" and config["dr-grpo"]["scale_rewards"] == "none"
    assert config["gspo"]["importance_sampling_level"] == "sequence"
    assert config["grpo"]["beta"] > 0 and config["grpo-no-kl"]["beta"] == 0


MIGRATE_0_19 = """\
# grpo: --trl-version 0.19.1
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
torch_dtype: bfloat16  # as stored
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [think_format_reward]
max_prompt_length: 512
per_device_train_batch_size: 8
num_generations: 8
"""


def test_migrate_writes_what_grpo_migrate_writes_with_the_forms_edits_in_the_file(http, tmp_path):
    edited = {**load_yaml(MIGRATE_0_19).data, "learning_rate": 3e-6}  # an edit made in the form after the import
    response = http.post("/api/v1/migrate", json={"config": edited, "source": MIGRATE_0_19, "from": "0.19.1"})
    assert response.status_code == 200, response.text
    answer = response.json()
    path = tmp_path / "recipe.yaml"
    path.write_text(MIGRATE_0_19 + "learning_rate: 3.0e-06\n")
    done = grpo("migrate", "--write", "--from", "0.19.1", str(path))
    assert done.returncode == 0, done.stderr
    assert answer["config"] == load_yaml(path.read_text()).data and answer["config"]["loss_type"] == "bnpo"
    assert "# as stored" in answer["yaml"] and answer["settings"]["trl_version"] == "1.16"
    assert [line.split(":")[0] for line in answer["cannot_keep"]] == ["max_prompt_length"]
    assert answer["written_for"] == "0.19.1" and answer["target"] == "1.16"


def test_migrate_goes_forward_only_and_refuses_what_is_not_a_release(http):
    config = load_yaml(MIGRATE_0_19).data
    backwards = http.post("/api/v1/migrate", json={"config": config, "from": "0.19.1", "to": "0.17.0"})
    assert backwards.status_code == 422 and "forward only" in backwards.json()["detail"]
    assert http.post("/api/v1/migrate", json={"config": config, "from": "nineteen"}).status_code == 422
    assert http.post("/api/v1/migrate", json={"config": [1], "from": "0.19.1"}).status_code == 422
    between = http.post("/api/v1/migrate", json={"config": config, "from": "0.19.1", "to": "0.24.0"}).json()
    assert between["target"] == "0.24.0" and between["config"]["loss_type"] == "bnpo"
    assert "max_prompt_length" in between["config"]  # 0.24 still reads it


def test_the_reward_names_are_the_releases_scripts(http):
    assert http.get("/api/v1/rewards", params={"trl_version": "0.19.1"}).json() == ["think_format_reward"]
    assert len(http.get("/api/v1/rewards").json()) == 4  # the service's own release: 1.16
    assert http.get("/api/v1/rewards", params={"trl_version": "0.9"}).status_code == 422

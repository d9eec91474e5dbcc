"""The server side of the form's fixes: what an export keeps of a recipe's comments, the modeline
of a downloaded export, the note about where the text came from, and a file's `# grpo:` settings read by
/api/v1/load and honoured by /api/v1/explain as `grpo validate` honours them in the file."""

from __future__ import annotations

import json
from pathlib import Path

from grpo_schema.engine.loader import load_yaml
from grpo_web.exporting import export_config, stale_comments
from tests.support.cli import grpo

ROOT = Path(__file__).resolve().parents[2]
RECIPE = (ROOT / "examples" / "grpo.yaml").read_text()


def cli(text: str, tmp_path: Path) -> dict:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    done = grpo("validate", "--format", "json", str(path), cwd=ROOT)
    return json.loads(done.stdout)["files"][0]


def test_comments_whose_numbers_describe_changed_values_are_dropped_and_the_others_kept():
    config = {**load_yaml(RECIPE).data, "per_device_train_batch_size": 8}
    exported = export_config(
        config,
        "http://127.0.0.1:8000/api/v1/schema",
        source=RECIPE,
        world_size=1,
        source_kind="recipe",
        source_name="GRPO (DeepSeekMath)",
    )
    assert "# World size: 8" not in exported.yaml and "4 x 8 x 2 = 64" not in exported.yaml
    assert "on 8 GPUs" not in exported.yaml and "# title: GRPO (DeepSeekMath)" in exported.yaml
    assert "beta: 0.04                    # KL to the reference model" in exported.yaml
    assert "~30% more compute" in exported.yaml  # activation_checkpointing did not change
    assert load_yaml(exported.yaml).data == {**config, "num_processes": 1}
    assert exported.notes[0].startswith("Written into the recipe's text (GRPO (DeepSeekMath))")
    assert "Dropped" in exported.notes[1]
    assert exported.yaml.startswith("# yaml-language-server: $schema=http://127.0.0.1:8000/api/v1/schema\n")


def test_an_unchanged_recipe_keeps_every_comment_and_an_import_says_so():
    exported = export_config(load_yaml(RECIPE).data, "u", source=RECIPE)
    assert exported.yaml.split("\n", 1)[1] == RECIPE.split("\n", 1)[1]
    assert not stale_comments(RECIPE, set(), set(load_yaml(RECIPE).data))
    assert exported.notes[0].startswith("Written into the imported file")


def test_an_edited_trailing_comment_with_a_number_goes_with_its_value():
    source = "beta: 0.04  # 4% of the reward scale\nlearning_rate: 1.0e-6  # sampling\n"
    exported = export_config({"beta": 0.1, "learning_rate": 1e-6}, "u", source=source)
    assert "beta: 0.1\n" in exported.yaml and "4%" not in exported.yaml
    assert "learning_rate: 1.0e-6  # sampling" in exported.yaml


def test_the_download_modeline_is_the_services_absolute_schema_url(live_server):
    with live_server.client() as client:
        body = client.post("/api/v1/export", json={"config": {"num_generations": 8}}).json()
        url = body["yaml"].split("\n", 1)[0].split("$schema=", 1)[1]
        assert url == f"{live_server.url}/api/v1/schema"
        assert "num_generations" in client.get(url).json()["properties"]
        with_profile = client.post("/api/v1/export?profile=open-r1", json={"config": {}}).json()["yaml"]
        assert "system_prompt" in client.get(with_profile.split("$schema=", 1)[1].split("\n")[0]).json()["properties"]
        # a recipe's relative modeline is replaced: it resolves beside examples/ only
        recipe = client.post(
            "/api/v1/export",
            json={"config": load_yaml(RECIPE).data, "source": RECIPE, "source_kind": "recipe", "source_name": "GRPO"},
        ).json()
        assert recipe["yaml"].startswith(f"# yaml-language-server: $schema={live_server.url}/api/v1/schema\n")
        assert "imported file" not in " ".join(recipe["notes"])
        assert client.post("/api/v1/export", json={"config": {}, "source_kind": "disk"}).status_code == 422


def test_load_answers_the_files_settings_and_explain_honours_them_as_the_cli_does(live_server, tmp_path):
    text = (
        "# grpo: --world-size 8 --hardware 1xH100-80GB --allow-env MY_TOKEN\n"
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nper_device_train_batch_size: 1\nnum_generations: 8\n"
        "env:\n  MY_TOKEN: x\n"
    )
    with live_server.client() as client:
        loaded = client.post("/api/v1/load", content=text, headers={"Content-Type": "application/yaml"}).json()
        settings = loaded["settings"]
        assert settings["world_size"] == 8 and settings["hardware"] == "1xH100-80GB"
        assert settings["allow_env"] == ["MY_TOKEN"]
        query = {
            "world_size": settings["world_size"],
            "hardware": settings["hardware"],
            "allow_env": settings["allow_env"],
        }
        form = client.post("/api/v1/explain", params=query, json=loaded["config"]).json()
        plain = client.post("/api/v1/explain", json=loaded["config"]).json()
        bad = client.post(
            "/api/v1/load",
            content="# grpo: --world-size eight\nbeta: 0.0\n",
            headers={"Content-Type": "application/yaml"},
        ).json()
    expected = cli(text, tmp_path)
    codes = lambda doc: sorted(d["code"] for d in doc["diagnostics"])  # noqa: E731
    assert (form["valid"], form["world_size"], codes(form)) == (
        expected["valid"],
        expected["world_size"],
        codes(expected),
    )
    assert "GRPO-H007" in codes(form) and "GRPO-E004" not in codes(form)  # --hardware and --allow-env both count
    assert codes(plain) != codes(expected)  # the mapping alone is judged otherwise: the settings matter
    assert [d["code"] for d in bad["diagnostics"]] == ["GRPO-Y015"] and bad["diagnostics"][0]["line"] == 1

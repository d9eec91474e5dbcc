"""One release, every surface: `--trl-version` on validate, explain, migrate, schema, lsp and serve, `?trl_version=`
on the service, the Pydantic context, and the default found beside the user (an installed trl, a repository pin)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.support.old_recipe import OLD_RECIPE, file_object, grpo


@pytest.fixture
def recipe(tmp_path) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(OLD_RECIPE)
    return path


def codes(result: dict) -> list[str]:
    return [d["code"] for d in result["diagnostics"]]


def test_validate_judges_as_the_release_named(recipe):
    old = file_object(str(recipe), "--trl-version", "0.19")
    assert old["valid"] and (old["trl_version"], old["trl_version_source"]) == ("0.19", "flag")
    new = file_object(str(recipe), "--trl-version", "1.16")
    assert not new["valid"] and {"GRPO-K002", "GRPO-K003"} <= set(codes(new))  # 1.16 reads none of the old names
    recipe.write_text(
        OLD_RECIPE.replace("scale_rewards: true", "scale_rewards: group") + "importance_sampling_level: sequence\n"
    )
    old = file_object(str(recipe), "--trl-version", "0.19.1")
    assert {"GRPO-T013", "GRPO-K009"} <= set(codes(old))  # 0.19's parser refuses both
    assert all(d["severity"] == "error" for d in old["diagnostics"] if d["code"] == "GRPO-K009")
    ignoring = file_object(str(recipe), "--trl-version", "0.18")  # 0.18 ignores keys it does not read
    assert [d["severity"] for d in ignoring["diagnostics"] if d["code"] == "GRPO-K009"] == ["warning"]


def test_the_release_defaults_drive_the_rules_and_the_schedule(recipe):
    explained = json.loads(grpo("explain", str(recipe), "--trl-version", "0.16", "--format", "json").stdout)
    assert explained["trl_version"] == "0.16"
    # before steps_per_generation existed every micro-step generated its own completions
    assert explained["derived"]["steps_per_generation"] == 1


@pytest.mark.parametrize("bad, said", [("abc", "not a TRL version"), ("0.9", "supported releases are 0.14.0")])
def test_a_version_that_cannot_be_judged_is_a_usage_error(recipe, bad, said):
    for command in (["validate", str(recipe)], ["explain", str(recipe)], ["schema"], ["migrate", str(recipe)]):
        done = grpo(*command, "--trl-version" if command[0] != "migrate" else "--from", bad)
        assert done.returncode == 2 and said in done.stderr, (command, done.stderr)


def test_a_release_newer_than_the_tables_is_judged_as_the_newest_with_a_warning(recipe):
    done = grpo("validate", str(recipe), "--trl-version", "9.1")
    assert "newer than the newest table" in done.stderr


def test_the_default_is_a_pin_in_the_repository(tmp_path, monkeypatch, capsys):
    """Where no trl is installed beside the interpreter, a pin in the config's repository names the release."""
    import grpo_schema.versions.detect as detect
    from grpo_schema.cli import main

    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("trl==0.19.1\ntorch>=2.4\n")
    (tmp_path / "configs").mkdir()
    config = tmp_path / "configs" / "run.yaml"
    config.write_text(OLD_RECIPE)
    monkeypatch.setattr(detect, "installed_version", lambda search_path=None: None)
    assert main(["validate", "--format", "json", str(config)]) == 0
    found = json.loads(capsys.readouterr().out)["files"][0]
    assert (found["trl_version"], found["trl_version_source"]) == ("0.19.1", "requirements")


def test_the_default_is_the_installed_trl(tmp_path, recipe):
    """A trl distribution on the path (its metadata only: nothing is imported) is the release judged."""
    site = tmp_path / "site"
    (site / "trl-0.23.1.dist-info").mkdir(parents=True)
    (site / "trl-0.23.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: trl\nVersion: 0.23.1\n")
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1]); from grpo_schema.cli import main; "
        "sys.exit(main(['validate', '--format', 'json', sys.argv[2]]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(site), str(recipe)], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    found = json.loads(done.stdout)["files"][0]
    assert (found["trl_version"], found["trl_version_source"]) == ("0.23.1", "installed")


def test_a_comment_names_the_release_under_the_flag(recipe):
    recipe.write_text("# grpo: --trl-version 0.19\n" + OLD_RECIPE)
    assert file_object(str(recipe))["trl_version_source"] == "comment"
    assert file_object(str(recipe), "--trl-version", "1.16")["trl_version_source"] == "flag"


def test_migrate_from_an_old_release_keeps_what_it_did(recipe, tmp_path):
    done = grpo("migrate", str(recipe), "--from", "0.19", "--write")
    assert done.returncode == 0, done.stderr
    assert "cannot keep: max_prompt_length" in done.stderr
    migrated = yaml.safe_load(recipe.read_text())
    assert migrated["dtype"] == "bfloat16" and "torch_dtype" not in migrated
    assert migrated["loss_type"] == "bnpo" and migrated["max_completion_length"] == 256  # 0.19's defaults, kept
    assert "# TRL 0.19.1's default" in recipe.read_text()
    as_116 = file_object(str(recipe), "--trl-version", "1.16")
    assert as_116["valid"], as_116["diagnostics"]
    assert grpo("migrate", str(recipe), "--to", "0.23").returncode == 2


def test_schema_per_release(tmp_path):
    schema = json.loads(grpo("schema", "--trl-version", "0.19").stdout)
    assert schema["x-trl-release"] == "0.19.1"
    assert schema["properties"]["scale_rewards"]["type"] == "boolean"
    assert "torch_dtype" in schema["properties"] and "importance_sampling_level" not in schema["properties"]
    committed = REPO / "schemas" / "trl-0.19.1" / "grpo-config.schema.json"
    assert json.loads(committed.read_text()) == schema


def test_the_trainer_choices_are_the_release_s_on_the_cli_and_in_its_schema(recipe):
    """0.19's trainer knows grpo, bnpo and dr_grpo ("Unknown loss type" for the rest); 0.26's also dapo, cispo, sapo."""
    recipe.write_text(OLD_RECIPE + "loss_type: cispo\n")
    old = file_object(str(recipe), "--trl-version", "0.19")
    refused = [d for d in old["diagnostics"] if d["code"] == "GRPO-T003"]
    assert not old["valid"] and len(refused) == 1 and refused[0]["fields"] == ["loss_type"]
    assert "bnpo, dr_grpo, grpo" in refused[0]["message"] and "cispo" in refused[0]["message"]
    assert "GRPO-T003" not in codes(file_object(str(recipe), "--trl-version", "0.26"))
    recipe.write_text(OLD_RECIPE + "loss_type: dr_grpo\nmax_completion_length: 256\n")
    assert file_object(str(recipe), "--trl-version", "0.19")["valid"]
    schema = json.loads((REPO / "schemas" / "trl-0.19.1" / "grpo-config.schema.json").read_text())["properties"]
    assert sorted(schema["loss_type"]["enum"]) == ["bnpo", "dr_grpo", "grpo"]
    assert len(schema["loss_type"]["enumDescriptions"]) == 3
    assert "**Default:** `bnpo`" in schema["loss_type"]["markdownDescription"]
    assert "cispo" not in schema["loss_type"]["markdownDescription"].split("**Default")[0]
    # 1.16's deprecations are not 0.19's: no schema of an older release tells the user to rename into a key it lacks
    assert "deprecationMessage" not in schema["gradient_checkpointing"]
    assert "activation_checkpointing" not in schema
    newest = json.loads((REPO / "schemas" / "grpo-config.schema.json").read_text())["properties"]
    assert "deprecationMessage" in newest["gradient_checkpointing"] and len(newest["loss_type"]["enum"]) == 8


def test_the_service_and_the_pydantic_api_take_the_release(recipe):
    pytest.importorskip("fastapi", reason="the service needs the web extra (pip install -e '.[web]')")
    import pydantic
    from fastapi.testclient import TestClient

    from grpo_schema import GRPORunConfig
    from grpo_web.app import create_app
    from grpo_web.settings import Settings

    client = TestClient(create_app(Settings()))
    served = client.post(
        "/api/v1/validate?trl_version=0.19.1", content=OLD_RECIPE, headers={"content-type": "application/yaml"}
    ).json()
    assert served["valid"] and served["trl_version"] == "0.19.1"
    assert codes(served) == codes(file_object(str(recipe), "--trl-version", "0.19.1"))
    refused = client.post(
        "/api/v1/validate?trl_version=0.9", content=OLD_RECIPE, headers={"content-type": "application/yaml"}
    )
    assert refused.status_code == 422 and "0.14.0" in refused.text
    releases = client.get("/api/v1/trl-versions").json()
    assert "0.19.1" in releases["releases"] and releases["default"]["version"]
    old_service = TestClient(create_app(Settings(trl_version="0.19")))
    assert old_service.post(
        "/api/v1/validate", content=OLD_RECIPE, headers={"content-type": "application/yaml"}
    ).json()["valid"]
    data = yaml.safe_load(OLD_RECIPE)
    GRPORunConfig.model_validate(data, context={"trl_version": "0.19.1"})
    with pytest.raises(pydantic.ValidationError) as refused_116:
        GRPORunConfig.model_validate(data)
    assert "GRPO-K002" in {e["type"] for e in refused_116.value.errors()}


def test_the_language_server_takes_the_release(tmp_path):
    from tests.support.lsp import start_server

    path = tmp_path / "run.grpo.yaml"
    path.write_text(OLD_RECIPE)
    for options, renamed_is_an_error in (({"grpo": {"trlVersion": "0.19"}}, False), ({"grpo": {}}, True)):
        client = start_server(initialization_options=options)
        try:
            found = {d["code"] for d in client.wait_publish(client.open(path))}
            assert ("GRPO-K002" in found) == renamed_is_an_error, found
        finally:
            client.close()


CORPUS = REPO.parent / "shared" / "grpo-corpus" / "valid"


def test_migrate_from_0_19_on_the_corpus_keeps_what_it_can_and_flags_the_rest(tmp_path):
    """Every real config, read as TRL 0.19 reads it, migrated to 1.16: the old names it reads are gone, 0.19's
    defaults that 1.16 changed are written out (so 1.16 reads the same values 0.19 did), and what 1.16 cannot
    keep is listed."""
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent (the shared corpus sits beside the project)")
    from grpo_schema import check_file
    from grpo_schema.engine.migrations import MIGRATIONS

    checked = 0
    for source in sorted(CORPUS.glob("*.yaml")):
        path = tmp_path / source.name
        path.write_text(source.read_text())
        before = check_file(path, trl_version="0.19.1", world_size=8)
        done = grpo("migrate", str(path), "--from", "0.19.1", "--write")
        assert done.returncode in (0, 1), (source.name, done.stderr)
        after = check_file(path, trl_version="1.16.0", world_size=8)
        if before.config is None or after.config is None:
            continue
        checked += 1
        migrated = yaml.safe_load(path.read_text())
        # nothing 1.16 renamed or removed is left, unless 1.16 can read neither (then it is listed)
        left = [k for k in migrated if k in MIGRATIONS]
        assert all(f"cannot keep: {k}" in done.stderr or MIGRATIONS[k].kind == "removed" for k in left), source.name
        # what 0.19 read (its defaults included) is what 1.16 reads now, for the settings both have (a value
        # 0.19's parser refuses, T013, was never read by it,
        # or its trainer refuses, T003 naming the release: judged with the release's default instead)
        refused = {
            f
            for d in before.diagnostics
            if d.code == "GRPO-T013" or d.code == "GRPO-T003" and "'s trainer accepts" in d.message
            for f in d.fields
        }
        for name in {
            "loss_type",
            "beta",
            "scale_rewards",
            "max_completion_length",
            "temperature",
            "vllm_mode",
            "gradient_checkpointing",
            "num_generations",
            "learning_rate",
        } - refused:
            assert getattr(after.config, name) == getattr(before.config, name), (source.name, name)
    assert checked >= 40

"""The endpoints behind the form's flows, over real HTTP: export into the imported file, profile detection on
load, recipes adapted to a profile, live run-policy findings, capabilities, and the local pickers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpo_schema import check_text
from grpo_schema.commands.migrate import migrate_text
from grpo_schema.engine.loader import load_yaml
from grpo_web.api.local import local_entries, preview
from grpo_web.exporting import edit_of, export_config, same_value
from grpo_web.settings import Settings
from tests.support.service import start_server

SOURCE = """\
# the model
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
torch_dtype: bfloat16  # old name
learning_rate: 1.0e-06
beta: 0.0   # no KL
reward_funcs:
- accuracy_reward
temperature: 1.0
"""


def test_same_value_is_json_equality_that_keeps_booleans_apart():
    assert same_value(1, 1.0) and same_value([1.0, {"a": 2}], [1, {"a": 2.0}])
    assert not same_value(True, 1) and not same_value(0, False) and not same_value("1", 1)
    assert not same_value({"a": 1, "b": 2}, {"b": 2, "a": 1})  # key order of a nested mapping is written


def test_edit_of_renames_in_place_and_touches_only_what_changed():
    old = load_yaml(SOURCE).data
    new = {
        "model_name_or_path": old["model_name_or_path"],
        "dtype": "bfloat16",
        "learning_rate": 1e-6,
        "beta": 0,
        "reward_funcs": ["accuracy_reward", "think_format_reward"],
        "temperature": 1,
    }
    fix = edit_of(old, new, {"torch_dtype": "dtype"})
    assert fix.rename == {"torch_dtype": "dtype"} and fix.unset == ()
    assert fix.set == {"reward_funcs": ["accuracy_reward", "think_format_reward"]}


def test_export_into_the_source_equals_grpo_migrate_and_keeps_floats():
    loaded = load_yaml(SOURCE).data
    config = {("dtype" if k == "torch_dtype" else k): v for k, v in loaded.items()}
    exported = export_config(
        json.loads(json.dumps(config)), "https://example/schema.json", source=SOURCE, renames={"torch_dtype": "dtype"}
    )
    expected, done, _ = migrate_text(SOURCE, check_text(SOURCE, suggest_fixes=False).diagnostics)
    assert done and exported.kept_source
    assert exported.yaml == "# yaml-language-server: $schema=https://example/schema.json\n" + expected
    assert "beta: 0.0   # no KL" in exported.yaml and "temperature: 1.0" in exported.yaml


def test_export_world_size_is_written_or_said_not_to_be():
    written = export_config({"beta": 0.0}, "u", world_size=8)
    assert load_yaml(written.yaml).data["num_processes"] == 8 and "num_processes: 8 written" in written.notes[0]
    left = export_config({"beta": 0.0}, "u", world_size=8, write_world_size=False)
    assert "num_processes" not in load_yaml(left.yaml).data
    assert "NOT in this file" in left.notes[0] and "--world-size 8" in left.notes[0]
    none = export_config({"beta": 0.0}, "u")
    assert "assume 1 process" in none.notes[0]


def test_an_edit_that_cannot_be_made_in_the_text_falls_back_and_says_so():
    source = "beta: 0.0  # none\n"  # the text editor edits plain keys and env.NAME only
    exported = export_config({"beta": 0.0, "odd[key]": 1}, "u", source=source)
    assert not exported.kept_source and "could not be kept" in exported.notes[0]
    assert load_yaml(exported.yaml).data == {"beta": 0.0, "odd[key]": 1}


@pytest.fixture(scope="module")
def runs_server(tmp_path_factory):
    settings = Settings(runs=True, token="t" * 32, runs_dir=tmp_path_factory.mktemp("runs"))
    server, thread, url = start_server(settings)
    yield url
    server.should_exit = True
    thread.join(timeout=10)


def test_export_endpoint_keeps_the_file_and_refuses_bad_requests(live_server):
    with live_server.client() as client:
        answer = client.post(
            "/api/v1/export",
            json={"config": {**load_yaml(SOURCE).data, "temperature": 0.7}, "source": SOURCE, "world_size": 2},
        )
        assert answer.status_code == 200
        body = answer.json()
        assert body["kept_source"] and "# the model" in body["yaml"] and "temperature: 0.7" in body["yaml"]
        assert body["yaml"].endswith("num_processes: 2\n")
        for bad in (
            {"config": []},
            {"config": {}, "world_size": 0},
            {"config": {}, "source": 3},
            {"config": {}, "write_world_size": "yes"},
        ):
            assert client.post("/api/v1/export", json=bad).status_code == 422, bad
        assert (
            client.post("/api/v1/export", content="a: 1", headers={"Content-Type": "application/yaml"}).status_code
            == 415
        )


def test_load_names_the_profile_a_file_uses(live_server):
    text = "dataset_name: x\nsystem_prompt: hi\nreward_funcs: [accuracy, format]\n"
    with live_server.client() as client:
        found = client.post("/api/v1/load", content=text, headers={"Content-Type": "application/yaml"}).json()
    assert found["profiles"] == [{"name": "open-r1", "keys": ["system_prompt"], "reward_funcs": ["accuracy", "format"]}]


def test_a_recipe_under_a_profile_uses_its_reward_registry(live_server):
    with live_server.client() as client:
        plain = client.get("/api/v1/presets/dapo").json()
        adapted = client.get("/api/v1/presets/dapo", params={"profile": "open-r1"}).json()
        profiles = client.get("/api/v1/profiles").json()
    assert plain["config"]["reward_funcs"] == ["accuracy_reward"] and plain["notes"] == []
    assert adapted["config"]["reward_funcs"] == ["accuracy"] and "open-r1's registry" in adapted["notes"][0]
    assert check_text(json.dumps(adapted["config"]), profiles=["open-r1"]).valid
    assert "tag_count" in next(p for p in profiles if p["name"] == "open-r1")["reward_funcs"]


def test_launch_findings_come_with_explain_only_when_runs_are_on(live_server, runs_server):
    import httpx

    config = {"output_dir": "/etc/elsewhere", "trust_remote_code": True}
    off = httpx.post(f"{live_server.url}/api/v1/explain?launch=true", json=config, timeout=30).json()
    assert "launch_diagnostics" not in off
    assert httpx.get(f"{live_server.url}/api/v1/capabilities").json() == {"runs": False}
    on = httpx.post(f"{runs_server}/api/v1/explain?launch=true", json=config, timeout=30).json()
    assert sorted(d["code"] for d in on["launch_diagnostics"]) == ["GRPO-X003", "GRPO-X004"]
    assert on["valid"] is True  # the config itself is fine for trl grpo; only the service refuses it
    assert httpx.get(f"{runs_server}/api/v1/capabilities").json() == {"runs": True}


def test_local_pickers_list_the_hub_cache_and_folders_and_preview_rows(tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    (hub / "models--Qwen--Qwen2.5-0.5B").mkdir(parents=True)
    (hub / "datasets--trl-lib--DeepMath-103K").mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    work = tmp_path / "work"
    (work / "tiny-model").mkdir(parents=True)
    (work / "tiny-model" / "config.json").write_text("{}")
    (work / "data").mkdir()
    rows = (json.dumps({"prompt": f"p{i}", "n": i}) + "\n" for i in range(9))
    (work / "data" / "train.jsonl").write_text("".join(rows))
    (work / "secret.txt").write_text("no")
    found = local_entries(work)
    assert {"name": "Qwen/Qwen2.5-0.5B", "where": "Hub cache"} in found["models"]
    assert {"name": "./tiny-model", "where": "local folder"} in found["models"]
    assert {"name": "trl-lib/DeepMath-103K", "where": "Hub cache"} in found["datasets"]
    assert {"name": "./data", "where": "local folder"} in found["datasets"]
    rows = preview(work, "data")
    assert rows["path"] == "data/train.jsonl" and rows["columns"] == ["prompt", "n"] and len(rows["rows"]) == 5
    from fastapi import HTTPException

    for refused in ("../work/data", "/etc/passwd", "secret.txt", "missing"):
        with pytest.raises(HTTPException):
            preview(work, refused)
    (work / "out").symlink_to(Path("/etc"))
    with pytest.raises(HTTPException):
        preview(work, "out/passwd")


def test_run_progress_counts_steps_since_the_last_checkpoint(tmp_path):
    from grpo_web.runs.documents import progress
    from grpo_web.runs.outputs import RUNTIME_STATE_FILE
    from grpo_web.runs.store import Run

    output = tmp_path / "out"
    for step in (5, 10):
        (output / f"checkpoint-{step}").mkdir(parents=True)
    (output / "checkpoint-5" / RUNTIME_STATE_FILE).write_text("{}")
    fields = {f: None for f in Run.__dataclass_fields__}
    run = Run(
        **{
            **fields,
            "id": "abc",
            "state": "running",
            "config_text": "max_steps: 40\n",
            "output_dir": str(output),
            "started_at": 1.0,
        }
    )
    found = progress(run, {"step": 12, "step_time": 0.5})
    assert found["total_steps"] == 40 and found["fraction"] == 0.3 and found["eta_seconds"] == 14.0
    assert found["last_checkpoint_step"] == 5 and found["steps_since_checkpoint"] == 7  # 10 is incomplete

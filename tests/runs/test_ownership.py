"""A run owns its output (two runs never write the same output_dir unless one resumes the other), paths are
resolved when the config is validated, and a failed run says why. Real `grpo serve --enable-runs`, real runs of
the tiny local model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.run_config import run_yaml

pytestmark = pytest.mark.slow


def post(service, text: str, **params):
    with service.client() as client:
        return client.post("/api/v1/runs", content=text, params=params, headers={"Content-Type": "application/yaml"})


def test_a_run_owns_its_output_dir(make_service, assets):
    service = make_service()
    # no output_dir: each run gets a folder of its own
    first, second = service.launch(run_yaml(assets, max_steps=2)), service.launch(run_yaml(assets, max_steps=2))
    assert first["output_dir"] != second["output_dir"]
    assert first["output_dir"].endswith(f"{first['id']}/output")

    named = run_yaml(assets, output_dir="demo/output", max_steps=2, save_steps=2)
    owner = service.launch(named)
    busy = post(service, named)  # still queued or running
    assert busy.status_code == 422 and busy.json()["diagnostics"][-1]["code"] == "GRPO-X007"
    service.wait_state(owner["id"], ("succeeded",))

    refused = post(service, named)  # finished: it still owns its checkpoints and model
    assert refused.status_code == 422, refused.text
    diag = refused.json()["diagnostics"][-1]
    assert diag["code"] == "GRPO-X007" and owner["id"] in diag["message"] and "existing_output" in diag["hint"]
    assert diag["line"] is not None and diag["fields"] == ["output_dir"]

    bad = post(service, named, existing_output="replace")
    assert bad.status_code == 422 and "existing_output" in bad.text

    resumed = post(
        service, run_yaml(assets, output_dir="demo/output", max_steps=4, save_steps=2), existing_output="resume"
    )
    assert resumed.status_code == 201, resumed.text
    assert resumed.json()["resumed_from"] == owner["id"]
    done = service.wait_state(resumed.json()["id"], ("succeeded",))
    assert done["resume_from_checkpoint"].endswith("checkpoint-2")
    assert done["checkpoints"] == ["checkpoint-2", "checkpoint-4"]

    again = post(service, named)  # the newest owner is named now
    assert again.status_code == 422 and resumed.json()["id"] in again.json()["diagnostics"][-1]["message"]

    fresh = post(service, named, existing_output="overwrite")
    assert fresh.status_code == 201, fresh.text
    old = service.run(owner["id"])
    assert old["replaced_by"] == fresh.json()["id"] and old["checkpoints"] == []
    assert "overwritten by run" in service.run_log(owner["id"])
    with service.client() as client:
        assert client.post(f"/api/v1/runs/{owner['id']}/resume").status_code == 409
    service.wait_state(fresh.json()["id"], ("succeeded",))
    assert service.run(fresh.json()["id"])["checkpoints"] == ["checkpoint-2"]


def test_relative_paths_are_read_from_the_service_folder(make_service, assets, tmp_path):
    folder = tmp_path / "service-folder"
    shutil.copytree(assets.model, folder / "demo" / "model")
    shutil.copytree(assets.data, folder / "demo" / "data")
    service = make_service(cwd=folder)
    text = (
        run_yaml(assets, max_steps=1).replace(str(assets.model), "./demo/model").replace(str(assets.data), "demo/data")
    )
    assert "./demo/model" in text and "demo/data" in text
    created = service.launch(text)
    expected = {
        "model_name_or_path": str((folder / "demo" / "model").resolve()),
        "dataset_name": str((folder / "demo" / "data").resolve()),
    }
    assert created["resolved_paths"] == expected
    done = service.wait_state(created["id"], ("succeeded", "failed"))
    assert done["state"] == "succeeded", service.run_log(created["id"])
    assert done["resolved_paths"] == expected and done["config"] == text  # the posted text, kept as posted


def test_a_failed_run_says_why(make_service, assets, tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    service = make_service()
    created = service.launch(run_yaml(assets, model_name_or_path=str(broken), max_steps=1))
    done = service.wait_state(created["id"], ("failed",))
    assert done["reason"].startswith("exited with code")
    error = done["error"]
    assert error and error.startswith(("ValueError", "OSError", "KeyError")), (error, service.run_log(created["id"]))
    assert "CalledProcessError" not in error and "the log says why" not in error
    with service.client() as client:  # the list says it too
        listed = client.get("/api/v1/runs").json()["runs"]
    assert [r["error"] for r in listed if r["id"] == created["id"]] == [error]


def output_files(folder: Path) -> dict[str, str]:
    """Every file under a run's output_dir with the hash of its bytes."""
    import hashlib

    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_two_launches_of_the_demo_recipe_keep_both_runs_outputs(make_service, assets, tmp_path):
    """The shipped Demo recipe, launched twice from the service's folder (where `grpo demo demo` wrote demo/),
    shortened to two steps: both runs finish, each in a folder of its own, and the first run's checkpoints and
    model are byte for byte what they were when it finished."""
    folder = tmp_path / "service-folder"
    shutil.copytree(assets.model, folder / "demo" / "model")
    shutil.copytree(assets.data, folder / "demo" / "data")
    recipe = (Path(__file__).resolve().parents[2] / "examples" / "demo.yaml").read_text()
    assert "output_dir" not in "".join(line for line in recipe.splitlines() if not line.startswith("#"))
    text = recipe.replace("max_steps: 60", "max_steps: 2").replace("save_steps: 30", "save_steps: 1")
    assert "max_steps: 2" in text and "save_steps: 1" in text
    service = make_service(cwd=folder)

    first = service.launch(text)
    done = service.wait_state(first["id"], ("succeeded", "failed"), timeout=300)
    assert done["state"] == "succeeded", service.run_log(first["id"])
    first_out = Path(done["output_dir"])
    before = output_files(first_out)

    second = service.launch(text)  # the same config again: accepted, into its own folder
    again = service.wait_state(second["id"], ("succeeded", "failed"), timeout=300)
    assert again["state"] == "succeeded", service.run_log(second["id"])
    second_out = Path(again["output_dir"])
    assert first_out != second_out and first_out.is_relative_to(service.runs_dir / first["id"])
    assert second_out.is_relative_to(service.runs_dir / second["id"])

    after = output_files(first_out)
    assert after == before  # nothing of the first run was touched
    for out, files, run in ((first_out, after, done), (second_out, output_files(second_out), again)):
        assert run["checkpoints"] == ["checkpoint-1", "checkpoint-2"]
        for step in (1, 2):
            assert f"checkpoint-{step}/runtime_state.json" in files
            assert any(
                name.startswith(f"checkpoint-{step}/") and name.endswith((".safetensors", ".bin")) for name in files
            ), sorted(files)
        assert any("/" not in name and name.endswith((".safetensors", ".bin")) for name in files), sorted(files)
        assert "config.json" in files  # the final model
        metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
        assert [m["step"] for m in metrics] == [1, 2]  # each run's own records only
    listed = {r["id"]: r for r in service.client().get("/api/v1/runs").json()["runs"]}
    assert listed[first["id"]]["replaced_by"] is None


def test_every_path_a_run_reads_is_resolved_before_validation(make_service, assets, tmp_path):
    """DeepSpeed and accelerate config files, the reward model: resolved against the service's folder like the model
    and dataset, before the config is validated; a refusal says which paths it judged."""
    folder = tmp_path / "service-folder"
    shutil.copytree(assets.model, folder / "demo" / "model")
    (folder / "ds.json").write_text(json.dumps({"zero_optimization": {"stage": 2}}))
    (folder / "accelerate.yaml").write_text("distributed_type: NO\n")
    service = make_service(cwd=folder)
    text = run_yaml(
        assets, deepspeed="./ds.json", config_file="accelerate.yaml", reward_model_name_or_path="demo/model"
    ).replace(str(assets.model), "demo/model")
    expected = {
        "model_name_or_path": str((folder / "demo" / "model").resolve()),
        "reward_model_name_or_path": str((folder / "demo" / "model").resolve()),
        "deepspeed": str((folder / "ds.json").resolve()),
        "config_file": str((folder / "accelerate.yaml").resolve()),
    }
    refused = post(service, text.replace("loss_type: dapo", "loss_type: no_such_loss"))
    assert refused.status_code == 422, refused.text  # a refusal says which paths it judged
    assert refused.json()["resolved_paths"] == expected
    assert [d["fields"] for d in refused.json()["diagnostics"] if d["severity"] == "error"] == [["loss_type"]]
    hub = post(
        service,
        run_yaml(assets, model_name_or_path="Qwen/Qwen2.5-0.5B", deepspeed="./ds.json", loss_type="no_such_loss"),
    )
    assert hub.json()["resolved_paths"] == {"deepspeed": str((folder / "ds.json").resolve())}  # a Hub name stays
    created = post(service, text)
    assert created.status_code == 201, created.text
    assert created.json()["resolved_paths"] == expected  # what the run gets as --set overrides
    with service.client() as client:
        client.post(f"/api/v1/runs/{created.json()['id']}/cancel")
    service.wait_state(created.json()["id"], ("cancelled", "failed", "succeeded"))
    command = service.run_log(created.json()["id"]).splitlines()[0]  # `$ python -m grpo_schema launch ...`
    assert all(f'{name}="{path}"' in command for name, path in expected.items()), command

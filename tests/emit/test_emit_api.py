"""POST /api/v1/emit: for every multi-node example and every target, the service writes exactly the text
`grpo launch --emit TARGET FILE` prints for the same file (one writer behind both); a config that is invalid at the
layout's world size is a 422 with its diagnostics, a layout that does not split a 422 saying what to change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.multi_node import EXAMPLES, MULTI

pytest.importorskip("fastapi", reason="the service tests need the web extra")
from fastapi.testclient import TestClient  # noqa: E402

from grpo_web.app import create_app  # noqa: E402
from tests.support.cli import grpo  # noqa: E402

CASES = [
    ("skypilot", None),
    ("dstack", None),
    *(("kubernetes", form) for form in ("pytorchjob", "trainjob", "jobset", "indexed-job")),
]


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as client:
        yield client


def profile_of(text: str) -> list[str]:
    """The `# profile: NAME` a recipe says it is written for (the form sends its profile picker's)."""
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("# profile:")]


def emit_both(client, folder: Path, name: str, target: str, form: str | None) -> tuple[str, str]:
    """(what the CLI prints, what the service answers) for examples/NAME saved as FOLDER/NAME."""
    text = (EXAMPLES / name).read_text()
    shutil.copyfile(EXAMPLES / name, folder / name)
    form_args = ["--k8s-form", form] if form else []
    cli = grpo("launch", "--emit", target, name, *form_args, cwd=folder)
    assert cli.returncode == 0, cli.stderr
    params = {"target": target, "file": name, **({"k8s_form": form} if form else {})}
    if profile_of(text):
        params["profile"] = profile_of(text)[0]
    answer = client.post("/api/v1/emit", params=params, content=text, headers={"Content-Type": "application/yaml"})
    assert answer.status_code == 200, answer.text
    assert "world size" in answer.headers["X-Grpo-Layout"]
    return cli.stdout, answer.text


@pytest.mark.parametrize("target, form", CASES)
def test_the_service_writes_what_the_cli_prints_for_every_target(client, tmp_path, target, form):
    cli, service = emit_both(client, tmp_path, "open-r1.yaml", target, form)
    assert service == cli


@pytest.mark.parametrize("name", [name for name in MULTI if name != "open-r1.yaml"])
def test_the_service_writes_what_the_cli_prints_for_every_multi_node_example(client, tmp_path, name):
    cli, service = emit_both(client, tmp_path, name, "kubernetes", "jobset")
    assert service == cli


def test_a_world_size_that_does_not_split_over_the_nodes_is_a_422(client):
    text = (EXAMPLES / "multinode-zero3.yaml").read_text()  # num_machines: 2
    answer = client.post(
        "/api/v1/emit",
        params={"target": "dstack", "world_size": 15},
        content=text,
        headers={"Content-Type": "application/yaml"},
    )
    assert answer.status_code == 422
    assert "num_processes 15 in the config, but the job has 2 nodes" in answer.json()["detail"]


def test_an_invalid_config_is_a_422_with_its_diagnostics(client):
    answer = client.post(
        "/api/v1/emit",
        params={"target": "skypilot"},
        json={
            "model_name_or_path": "Qwen/Qwen2.5-0.5B",
            "num_generations": 8,
            "per_device_train_batch_size": 3,
            "hardware": "2x8xH100-80GB",
        },
    )
    assert answer.status_code == 422
    codes = {d["code"] for d in answer.json()["diagnostics"] if d["severity"] == "error"}
    assert "GRPO-R004" in codes and "GRPO-S002" in codes  # no reward, no dataset: nothing to run on any node


def test_typed_hardware_sets_the_nodes_and_an_unknown_one_is_refused(client):
    text = (EXAMPLES / "grpo.yaml").read_text()  # num_processes: 8, no hardware
    answer = client.post(
        "/api/v1/emit",
        params={"target": "skypilot", "hardware": "2x4xA100-80GB"},
        content=text,
        headers={"Content-Type": "application/yaml"},
    )
    assert answer.status_code == 200 and answer.headers["X-Grpo-Layout"].startswith("2 nodes x 4 processes")
    assert "accelerators: A100:4" in answer.text
    answer = client.post(
        "/api/v1/emit",
        params={"target": "skypilot", "hardware": "2x4xfoo"},
        content=text,
        headers={"Content-Type": "application/yaml"},
    )
    assert answer.status_code == 422 and "unknown accelerator 'FOO'" in answer.json()["detail"]


@pytest.mark.parametrize("bad", ["../etc/passwd", "a b", "-x", "x;rm"])
def test_file_and_job_names_are_plain_names(client, bad):
    for field in ("file", "name", "volume"):
        answer = client.post(
            "/api/v1/emit",
            params={"target": "dstack", field: bad},
            content=(EXAMPLES / "grpo.yaml").read_text(),
            headers={"Content-Type": "application/yaml"},
        )
        assert answer.status_code == 422, (field, bad)

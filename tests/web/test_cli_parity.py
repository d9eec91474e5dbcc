"""The service answers with the CLI's own objects: /validate = `grpo validate --format json`, /explain = `grpo
explain --format json`, for every example, fixture and reference-corpus file (one CLI run per option set)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import conformance_files
from tests.support.cli import grpo


@pytest.fixture(scope="module")
def http(live_server):
    with live_server.client() as client:
        yield client


def cli_json(*args: str) -> dict:
    done = grpo(*args)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def every_file() -> list[Path]:
    return conformance_files("valid") + conformance_files("invalid")


@pytest.mark.parametrize("options", [[], ["--world-size", "8", "--profile", "open-r1"]], ids=["default", "ws8-open-r1"])
def test_validate_file_objects_equal_the_cli_for_every_file(http, options):
    files = every_file()
    expected = cli_json("validate", "--format", "json", *options, *map(str, files))["files"]
    params = {"world_size": 8, "profile": "open-r1"} if options else {}
    assert len(expected) == len(files)
    for path, file_object in zip(files, expected):
        response = http.post(
            "/api/v1/validate",
            content=path.read_bytes(),
            headers={"content-type": "application/yaml"},
            params={**params, "path": str(path)},
        )
        assert response.status_code == 200
        assert without_read_note(response.json()) == without_read_note(file_object), path.name


def without_read_note(file_object: dict) -> dict:
    """The file object less why the prompt length is a default: the CLI finds no dataset on this machine, the
    service (runs off) reads none by policy; the estimate is the same (a file whose `# grpo: --hardware` comment
    asks for the fit, such as the Demo recipe, has these lines)."""
    lines = file_object.get("memory_lines")
    if not lines:
        return file_object
    return {**file_object, "memory_lines": [line for line in lines if not line.startswith("assumes prompts of")]}


def test_explain_equals_the_cli(http):
    for path in conformance_files("invalid")[:3] + conformance_files("valid")[:3]:
        expected = cli_json("explain", str(path), "--format", "json", "--dataset-size", "1000")
        response = http.post(
            "/api/v1/explain",
            content=path.read_bytes(),
            headers={"content-type": "text/yaml"},
            params={"path": str(path), "dataset_size": 1000},
        )
        assert response.json() == expected, path.name


def test_explain_has_the_interface_fields(http):
    body = http.post(
        "/api/v1/explain",
        json={"gradient_accumulation_steps": 4, "steps_per_generation": 2},
        params={"dataset_size": 64},
    ).json()
    required = {
        "world_size",
        "generation_batch_size",
        "steps_per_generation",
        "prompts_per_generation",
        "completions_per_optimizer_step",
        "optimizer_steps_per_generation",
        "generate_every_micro_steps",
        "old_logprobs_needed",
        "optimizer_steps_per_epoch",
    }
    assert required <= set(body["derived"])
    assert body["schedule"] and body["schedule"][0]["generates"] is True


def test_a_hardware_comment_asks_the_cli_and_the_service_for_the_same_fit(tmp_path):
    """`# grpo: --hardware SPEC` makes both check the memory fit; a bare hardware: section makes neither."""
    import json

    from fastapi.testclient import TestClient

    from grpo_web.app import create_app
    from grpo_web.settings import Settings

    body = (
        "# grpo: --hardware 1xH100-80GB\nmodel_name_or_path: Qwen/Qwen2.5-7B-Instruct\n"
        "dataset_name: trl-lib/DeepMath-103K\nreward_funcs: [accuracy_reward]\nper_device_train_batch_size: 8\n"
        "num_generations: 8\nmax_completion_length: 4096\n"
    )
    client = TestClient(create_app(Settings()))
    for text in (body, body.replace("# grpo: --hardware 1xH100-80GB\n", "hardware: 1xH100-80GB\n")):
        path = tmp_path / "run.yaml"
        path.write_text(text)
        cli = json.loads(grpo("validate", str(path), "--format", "json").stdout)["files"][0]
        served = client.post("/api/v1/validate", content=text, headers={"content-type": "application/yaml"}).json()
        codes = [d["code"] for d in cli["diagnostics"]]
        assert codes == [d["code"] for d in served["diagnostics"]]
        assert ("GRPO-H001" in codes) == text.startswith("# grpo:")  # 7B full training does not fit one H100

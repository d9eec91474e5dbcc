"""The HTTP API over real HTTP against a running uvicorn (interface.md §5): answers, refusals, CLI parity."""

from __future__ import annotations

import json

import pytest

from grpo_schema import check_mapping, check_text
from grpo_schema.commands.export import export_schema

YAML = {"content-type": "application/yaml"}
VALID = b"""model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
per_device_train_batch_size: 8
num_generations: 8
"""
INVALID = VALID.replace(b"num_generations: 8", b"num_generations: 3")


@pytest.fixture(scope="module")
def http(live_server):
    with live_server.client() as client:
        yield client


def validate(http, body, content_type="application/yaml", **params):
    return http.post("/api/v1/validate", content=body, headers={"content-type": content_type}, params=params)


def test_healthz(http):
    response = http.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_schema_is_the_exported_schema(http):
    schema = http.get("/api/v1/schema").json()
    assert schema == json.loads(json.dumps(export_schema()))
    assert all("x-group" in prop for prop in schema["properties"].values())
    with_profile = http.get("/api/v1/schema", params={"profile": "open-r1"}).json()
    assert with_profile == json.loads(json.dumps(export_schema(profiles=["open-r1"])))
    assert http.get("/api/v1/schema", params={"profile": "nope"}).status_code == 422


def test_valid_yaml_gives_a_valid_file_object_with_the_schedule(http):
    body = validate(http, VALID).json()
    assert set(body) >= {"path", "valid", "world_size", "diagnostics", "derived"}
    assert body["valid"] is True and body["world_size"] == 1
    assert body["derived"]["generation_batch_size"] == 8 and body["derived"]["prompts_per_generation"] == 1


@pytest.mark.parametrize(
    "content_type", ["application/yaml", "text/yaml", "text/plain", "application/x-yaml", "text/plain; charset=utf-8"]
)
def test_invalid_config_is_200_with_its_diagnostics(http, content_type):
    response = validate(http, INVALID, content_type)
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False
    b001 = next(d for d in body["diagnostics"] if d["code"] == "GRPO-B001")
    assert "num_generations" in b001["fields"] and b001["line"] == 5 and b001["column"] == 1


@pytest.mark.parametrize(
    "text",
    [
        b"a: [1, 2\n",
        b"\tnum_generations: 4\n",
        b"key: value\n  bad indent: 1\n",
        b"\xff\xfe\x00garbage",
        b"",
        b"- just\n- a list\n",
        b"!!python/object:os.system x",
    ],
)
def test_malformed_yaml_is_a_diagnostic_not_an_error_status(http, text):
    response = validate(http, text)
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False and body["diagnostics"][0]["severity"] == "error"


def test_world_size_and_profile_reach_the_validator(http):
    body = validate(http, VALID, world_size=3).json()
    assert body["world_size"] == 3 and body["derived"]["generation_batch_size"] == 24
    open_r1 = validate(http, VALID, profile="open-r1").json()
    assert any(d["code"] for d in open_r1["diagnostics"] if "reward_funcs" in d["fields"])


@pytest.mark.parametrize(
    "params",
    [
        {"world_size": 0},
        {"world_size": "two"},
        {"world_size": 10**9},
        {"world_size": 1.5},
        {"profile": "no-such-profile"},
        {"profile": "os:system"},
        {"path": "x" * 2000},
    ],
)
def test_wrong_query_values_are_422(http, params):
    response = validate(http, VALID, **params)
    assert response.status_code == 422, response.text
    assert "detail" in response.json()


@pytest.mark.parametrize("dataset_size", [0, -3, "many"])
def test_wrong_dataset_size_is_422(http, dataset_size):
    response = http.post("/api/v1/explain", content=VALID, headers=YAML, params={"dataset_size": dataset_size})
    assert response.status_code == 422


@pytest.mark.parametrize(
    "content_type",
    ["image/png", "application/xml", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", ""],
)
def test_other_content_types_are_415(http, content_type):
    headers = {"content-type": content_type} if content_type else {}
    response = http.post("/api/v1/validate", content=VALID, headers=headers)
    assert response.status_code == 415 and "application/yaml" in response.json()["detail"]


@pytest.mark.parametrize(
    "body",
    [
        b"[1, 2]",
        b'"text"',
        b"3",
        b"null",
        b"{not json",
        b'{"a": NaN}',
        b'{"a": 1e999}',
        b'{"a": 1, "a": 2}',
        b"\xff\xfe",
        b"[" * 5000,
        b'{"a": ' + b"[" * 60 + b"]" * 60 + b"}",
    ],
)
def test_json_that_is_not_a_usable_object_is_422(http, body):
    response = validate(http, body, "application/json")
    assert response.status_code == 422, response.text


def test_oversized_body_is_413(http, live_server):
    limit = live_server.settings.max_body_bytes
    response = validate(http, b"# " + b"x" * limit + b"\n")
    assert response.status_code == 413


def test_oversized_chunked_body_without_length_is_413(http, live_server):
    def chunks():  # no Content-Length: the limit must hold on the bytes received
        for _ in range(live_server.settings.max_body_bytes // 10_000 + 5):
            yield b"# " + b"x" * 9_997 + b"\n"

    response = http.post("/api/v1/validate", content=chunks(), headers=YAML)
    assert response.status_code == 413


def test_a_body_just_under_the_limit_is_read(http, live_server):
    padding = b"# " + b"x" * (live_server.settings.max_body_bytes - len(VALID) - 10) + b"\n"
    assert validate(http, padding + VALID).json()["valid"] is True


def test_json_and_yaml_bodies_give_the_same_diagnostics(http):
    mapping = {
        "num_generation": 4,
        "per_device_train_batch_size": 6,
        "loss_type": "grpoo",
        "beta": "high",
        "reward_funcs": "accuracy_reward",
        "learning_rate": 1e-6,
    }
    as_yaml = validate(http, check_text_yaml(mapping)).json()
    as_json = http.post("/api/v1/validate", json=mapping).json()
    assert without_positions(as_json) == without_positions(as_yaml)
    assert len(as_json["diagnostics"]) >= 4


def check_text_yaml(mapping: dict) -> bytes:
    from grpo_web.yamltext import config_yaml

    return config_yaml(mapping, "https://example.invalid/schema.json").encode()


def without_positions(file_object: dict) -> dict:
    """The file object minus what only a text has: positions, origin, and the line order of diagnostics."""
    keep = {k: v for k, v in file_object.items() if k != "path"}
    keep["diagnostics"] = sorted(
        ({k: v for k, v in d.items() if k not in ("line", "column", "origin")} for d in file_object["diagnostics"]),
        key=lambda d: json.dumps(d, sort_keys=True),
    )
    return keep


def test_the_service_returns_exactly_the_library_dicts(http):
    from grpo_web.settings import Settings

    version, source = Settings().judged_trl()  # the release the service judges by (its installed trl, or 1.16)
    judged = {"trl_version": version, "trl_version_source": source}
    mapping = {"num_generations": 3, "max_prompt_length": 5}
    from_http = http.post("/api/v1/validate", json=mapping, params={"path": "x.json"}).json()
    assert from_http == json.loads(json.dumps(check_mapping(mapping, path="x.json", **judged).to_dict()))
    from_yaml = validate(http, INVALID, path="run.yaml").json()
    assert from_yaml == json.loads(json.dumps(check_text(INVALID, path="run.yaml", **judged).to_dict()))


def test_openapi_documents_yaml_and_json_bodies_with_examples(http):
    spec = http.get("/openapi.json").json()
    for path in ("/api/v1/validate", "/api/v1/explain"):
        content = spec["paths"][path]["post"]["requestBody"]["content"]
        assert content["application/yaml"]["examples"] and content["application/json"]["examples"]
        assert {"413", "415", "422"} <= set(spec["paths"][path]["post"]["responses"])
    assert {"/healthz", "/api/v1/schema", "/api/v1/yaml", "/api/v1/presets"} <= set(spec["paths"])

"""The fast lane for POST /api/v1/validate (web/api/fastlane.py) answers exactly what the route answers.

Every request here goes to two copies of the app, one with the lane and one without it, and the two answers must
be the same bytes: status, headers and body. The requests cover what the lane takes (YAML and JSON bodies of the
corpus, small and large, plain queries) and what it must leave to the route (other content types, queries the
route validates, oversized bodies, profiles), plus a client that disconnects halfway through its body.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from fastapi.testclient import TestClient

from grpo_schema.engine.loader import load_yaml
from grpo_web.api import fastlane
from grpo_web.app import create_app
from grpo_web.settings import Settings
from tests.conftest import conformance_files
from tests.support.web_app import without_lane

SETTINGS = Settings(max_body_bytes=64_000, max_world_size=64, cors_origins=["https://example.org"])
QUERIES = [
    "",
    "world_size=2",
    "world_size=64",
    "world_size=65",
    "world_size=0",
    "world_size=08",
    "world_size=abc",
    "world_size=",
    "world_size=2&world_size=3",
    "path=my.yaml",
    "path=" + "a" * 1001,
    "path=%C3%A9&x=1",
    "profile=open-r1",
    "profile=nope",
    "unknown=1",
    "world_size=4&path=a%20b",
    "hardware=8xH100-80GB",
    "hardware=nope",
    "world_size=8&hardware=1xA100-40GB",
    "allow_env=HF_HOME",
    "allow_env=HF_HOME&path=x",
]
CONTENT_TYPES = [
    "application/yaml",
    "text/plain; charset=utf-8",
    "TEXT/YAML",
    "application/x-yaml",
    "application/json",
    "application/xml",
    "",
]


@pytest.fixture(scope="module")
def clients():
    with TestClient(create_app(SETTINGS)) as lane, TestClient(without_lane(SETTINGS)) as route:
        yield lane, route


def answer(client: TestClient, body: bytes, content_type: str, query: str = "", **headers: str):
    sent = {"content-type": content_type, **headers} if content_type else headers
    response = client.post(f"/api/v1/validate?{query}" if query else "/api/v1/validate", content=body, headers=sent)
    return response.status_code, sorted(response.headers.items()), response.content


def same(clients, body: bytes, content_type: str = "application/yaml", query: str = "", **headers: str) -> int:
    lane, route = clients
    got, expected = (
        answer(lane, body, content_type, query, **headers),
        answer(route, body, content_type, query, **headers),
    )
    assert got == expected, (content_type, query, body[:200])
    return got[0]


def corpus_bodies() -> list[bytes]:
    files = [path.read_bytes() for path in conformance_files("valid") + conformance_files("invalid")]
    # a recipe long enough for the thread-pool path, whatever the checkout holds (the corpus has some of its own)
    padded = files[0] + b"".join(
        b"# a long comment line, as big recipes have\n" for _ in range(fastlane.INLINE_MAX_BYTES // 40 + 1)
    )
    return [*files, padded]


def test_the_lane_answers_every_corpus_file_as_the_route_does(clients):
    bodies = corpus_bodies()
    large = [body for body in bodies if len(body) > fastlane.INLINE_MAX_BYTES]
    assert large, "some corpus files should take the thread-pool path"
    for body in bodies:
        assert same(clients, body) == 200
        loaded = load_yaml(body)
        if loaded.ok and isinstance(loaded.data, dict):
            try:
                as_json = json.dumps(loaded.data, allow_nan=False).encode()
            except (TypeError, ValueError):  # dates, NaN: YAML only
                continue
            assert same(clients, as_json, "application/json") == 200


@pytest.mark.parametrize("query", QUERIES)
def test_queries_are_answered_as_the_route_answers_them(clients, query):
    same(clients, b"num_generations: 3\nper_device_train_batch_size: 4\n", query=query)
    # a memory fit and an `env:` section, which ?hardware= and ?allow_env= change (the lane once ignored both)
    same(
        clients,
        b"model_name_or_path: Qwen/Qwen2.5-7B\nper_device_train_batch_size: 8\nnum_generations: 8\n"
        b"env:\n  HF_HOME: /data/hf\n",
        query=query,
    )


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
def test_content_types_are_answered_as_the_route_answers_them(clients, content_type):
    for body in (b"num_generations: 4\n", b'{"num_generations": 4}', b"[1, 2]", b"{bad json", b"\xff\xfe"):
        same(clients, body, content_type)


def test_refusals_and_cors_match(clients):
    assert same(clients, b"a: 1\n" * 20_000) == 413
    assert same(clients, b'{"a": NaN}', "application/json") == 422
    assert same(clients, b"num_generations: 4\n", Origin="https://example.org") == 200
    assert same(clients, b"num_generations: 4\n", Origin="https://elsewhere.example") == 200


def test_the_lane_takes_only_the_plain_case():
    plain = {
        "type": "http",
        "method": "POST",
        "path": "/api/v1/validate",
        "query_string": b"world_size=2",
        "headers": [(b"content-type", b"application/yaml"), (b"content-length", b"10")],
        "app": create_app(SETTINGS),
    }
    version, source = Settings().judged_trl()  # the release the service judges by, as the route would
    assert fastlane._plain_request(plain) == (
        "application/yaml",
        {"path": "<request>", "world_size": 2, "profiles": (), "trl_version": version, "trl_version_source": source},
    )
    for change in (
        {"method": "PUT"},
        {"query_string": b"profile=open-r1"},
        {"headers": [(b"content-type", b"application/yaml")]},
        {"headers": [(b"content-type", b"application/yaml"), (b"transfer-encoding", b"chunked")]},
        {"headers": [(b"content-type", b"application/yaml"), (b"content-length", b"64001")]},
    ):
        assert fastlane._plain_request({**plain, **change}) is None, change


def run_asgi(app, messages: list[dict]) -> tuple[list[dict], str]:
    """Call the app with a body that arrives as `messages`; what it sent, and the exception it raised (if any)."""
    body_length = sum(len(m.get("body", b"")) for m in messages) + 10
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/v1/validate",
        "raw_path": b"/api/v1/validate",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"test"),
            (b"content-type", b"application/yaml"),
            (b"content-length", str(body_length).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    pending, sent = list(messages), []

    async def receive():
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    async def call():
        try:
            await app(scope, receive, send)
        except Exception as exc:  # noqa: BLE001 - compared between the two apps
            return type(exc).__name__
        return ""

    return sent, asyncio.run(call())


def test_a_client_that_disconnects_mid_body_gets_the_route_behaviour():
    messages = [{"type": "http.request", "body": b"num_generations: ", "more_body": True}, {"type": "http.disconnect"}]
    lane, route = create_app(SETTINGS), without_lane(SETTINGS)
    assert run_asgi(lane, list(messages)) == run_asgi(route, list(messages))


def test_plain_requests_never_reach_the_route(monkeypatch):
    import grpo_web.api.check as route_module

    async def route_check(*args, **kwargs):
        raise AssertionError("the route answered a request the lane should have taken")

    monkeypatch.setattr(route_module, "run_check", route_check)
    big = b"num_generations: 4\n" + b"# padding\n" * (fastlane.INLINE_MAX_BYTES // 10 + 1)
    with TestClient(create_app(SETTINGS)) as client:
        for body, content_type, query in [
            (b"num_generations: 4\n", "application/yaml", ""),
            (big, "text/plain", ""),
            (b'{"num_generations": 4}', "application/json", "world_size=2&path=x"),
        ]:
            response = client.post(f"/api/v1/validate?{query}", content=body, headers={"content-type": content_type})
            assert response.status_code == 200 and response.json()["path"] in ("<request>", "x")

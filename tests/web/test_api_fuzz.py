"""Fuzzed requests over real HTTP never reach the catch-all 500: bad input is always a 200 diagnostic or a 4xx.

The bodies mix config keys with wrong types, YAML syntax fragments, random bytes and JSON of every shape; the
queries mix good and bad values. A 500 here would be a real bug in grpo_schema or the service.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_schema.commands.export import export_schema

KEYS = sorted(export_schema()["properties"]) + ["env", "num_generation", "datasets", "max_prompt_length"]
ALLOWED = {200, 413, 415, 422}
CONTENT_TYPES = [
    "application/yaml",
    "text/plain",
    "application/json",
    "text/yaml; charset=latin-1",
    "application/x-yaml",
    "application/octet-stream",
    "APPLICATION/JSON",
    "",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["1e-6", "auto", "none", "yes", "~", ".inf", "group"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
configs = st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=12)), values, max_size=10)
yaml_fragments = st.lists(
    st.sampled_from(
        [
            "num_generations: ",
            "- ",
            ": ",
            "&a ",
            "*a",
            "!!binary ",
            "{",
            "}",
            "[",
            "]",
            "\t",
            "\n",
            "  ",
            "'",
            '"',
            "#",
            "---\n",
            "...\n",
            "? ",
            "|\n",
            "%YAML 1.2\n",
            "env:\n  X: ",
            "<<: *a\n",
            "1e-6",
            "8",
        ]
    ),
    max_size=30,
).map("".join)
bodies = st.one_of(
    configs.map(lambda c: json.dumps(c).encode()),
    yaml_fragments.map(str.encode),
    st.binary(max_size=300),
    values.map(lambda v: json.dumps(v).encode()),
)
queries = st.fixed_dictionaries(
    {},
    optional={
        "world_size": st.one_of(st.integers(-3, 5000), st.text(max_size=5)),
        "profile": st.sampled_from(["open-r1", "nope", "", "a:b"]),
        "dataset_size": st.one_of(st.integers(-2, 10**6), st.text(max_size=4)),
    },
)


@pytest.fixture(scope="module")
def http(live_server):
    with live_server.client() as client:
        yield client


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=bodies,
    content_type=st.sampled_from(CONTENT_TYPES),
    query=queries,
    endpoint=st.sampled_from(["validate", "explain", "load"]),
)
def test_fuzzed_requests_never_get_a_5xx(http, body, content_type, query, endpoint):
    headers = {"content-type": content_type} if content_type else {}
    response = http.post(f"/api/v1/{endpoint}", content=body, headers=headers, params=query)
    assert response.status_code in ALLOWED, (response.status_code, response.text[:500])
    response.json()  # always a JSON answer


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=configs)
def test_fuzzed_config_objects_are_always_200(http, config):
    for endpoint in ("validate", "explain"):
        response = http.post(f"/api/v1/{endpoint}", json=config)
        assert response.status_code == 200, response.text[:500]
        body = response.json()
        assert isinstance(body["valid"], bool) and isinstance(body["diagnostics"], list)
    exported = http.post("/api/v1/yaml", json=config)
    assert exported.status_code == 200


def test_a_real_bug_is_a_logged_500_not_a_crash(live_server, caplog):
    """The catch-all exists for bugs only: a route that raises gives a JSON 500 and a log line."""
    from fastapi.testclient import TestClient

    from grpo_web.app import create_app

    app = create_app(live_server.settings)

    @app.get("/boom")
    def boom():
        raise RuntimeError("deliberate")

    with TestClient(app, raise_server_exceptions=False) as client, caplog.at_level("ERROR", logger="web"):
        response = client.get("/boom")
    assert response.status_code == 500 and "internal error" in response.json()["detail"]
    assert any("unhandled error on GET /boom" in r.message for r in caplog.records)

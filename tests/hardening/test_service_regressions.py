"""Defects of the service and the CLI found by schemathesis and the hardening review, as regression tests.

In-process (ASGI TestClient): these are about what the app answers, not about sockets.
"""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the service needs the web extra")

from fastapi.testclient import TestClient  # noqa: E402

from grpo_web.app import create_app  # noqa: E402
from grpo_web.settings import Settings  # noqa: E402
from tests.support.cli import grpo  # noqa: E402

HUGE = str(10**400)
CONFIG = b"num_generations: 8\n"


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Settings()), raise_server_exceptions=False) as test_client:
        yield test_client


def test_a_dataset_size_past_64_bits_is_a_422_not_a_500(client):
    """?dataset_size=10**400 reached the plan's float arithmetic: OverflowError, a 500 from POST /explain."""
    response = client.post(
        "/api/v1/explain", params={"dataset_size": HUGE}, content=CONFIG, headers={"content-type": "application/yaml"}
    )
    assert response.status_code == 422
    largest = client.post(
        "/api/v1/explain",
        params={"dataset_size": str(2**63 - 1)},
        content=CONFIG,
        headers={"content-type": "application/yaml"},
    )
    assert largest.status_code == 200


@pytest.mark.parametrize(
    "argv", [["explain", "--dataset-size", HUGE], ["explain", "--world-size", HUGE], ["validate", "--world-size", HUGE]]
)
def test_cli_numbers_past_64_bits_are_a_usage_error(tmp_path, argv):
    """`grpo explain --dataset-size 10**400` (and --world-size) ended in an OverflowError traceback."""
    config = tmp_path / "run.yaml"
    config.write_bytes(CONFIG)
    done = grpo(argv[0], str(config), *argv[1:])
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-500:]


def test_the_openapi_document_lists_what_the_service_accepts(client):
    """schemathesis (positive_data_acceptance): ?profile= took any string but only registered names pass, and
    world_size had no documented maximum; POST /api/v1/yaml documented its JSON errors as text/plain."""
    document = client.get("/openapi.json").json()
    parameters = {p["name"]: p["schema"] for p in document["paths"]["/api/v1/validate"]["post"]["parameters"]}
    assert parameters["profile"]["items"]["enum"] == ["open-r1", "unsloth"]
    assert parameters["world_size"]["maximum"] == Settings().max_world_size
    errors = document["paths"]["/api/v1/yaml"]["post"]["responses"]["415"]["content"]
    assert list(errors) == ["application/json"]


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("PUT", "/api/v1/validate", "POST"), ("DELETE", "/healthz", "GET"), ("PATCH", "/twice", "GET, POST")],
)
def test_a_405_names_every_method_of_the_path(method, path, allowed):
    """schemathesis (allow_header_conformance): Starlette's 405 named only the first route of a path, so
    OPTIONS /api/v1/runs said `Allow: POST` although GET is served too."""
    app = create_app(Settings())
    app.get("/twice")(lambda: {})  # two routes, one path: like GET and POST /api/v1/runs
    app.post("/twice")(lambda: {})
    with TestClient(app) as client:
        response = client.request(method, path)
    assert response.status_code == 405 and response.headers["allow"] == allowed

"""POST /api/v1/smoke on a real `grpo serve --enable-runs`: the token, the runs switch and the run checks
apply as for a run, and the answer is the `grpo smoke --format json` report."""

import pytest

pytest.importorskip("fastapi", reason="the service tests need the web extra")

from tests.runs.conftest import TOKEN, assets, make_service, run_yaml  # noqa: E402,F401 - fixtures

pytestmark = pytest.mark.slow


def smoke(service, text, token=TOKEN, **params):
    with service.client(token) as client:
        client.timeout = 600
        return client.post("/api/v1/smoke", content=text, params=params,
                           headers={"Content-Type": "application/yaml"})


def test_the_service_smoke_tests_a_config_and_names_a_failure(make_service, assets):
    service = make_service()
    answer = smoke(service, run_yaml(assets))
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert report["passed"] and report["exit_code"] == 0 and report["file"] == "<request>", report
    assert {g["group"]: g["status"] for g in report["groups"]}["checkpoint save and resume"] == "exercised"
    failing = smoke(service, run_yaml(assets, reward_funcs=["accuracy_reward"]))
    report = failing.json()
    assert failing.status_code == 200, failing.text
    assert report["exit_code"] == 4 and report["component"] == "dataset column"
    assert "'solution'" in report["error"]


def test_the_service_smoke_needs_the_token_and_a_valid_config(make_service, assets):
    service = make_service()
    assert smoke(service, run_yaml(assets), token="wrong-token-" + "y" * 20).status_code == 401
    refused = smoke(service, run_yaml(assets, loss_type="no_such_loss"))
    assert refused.status_code == 422 and refused.json()["valid"] is False
    imported = smoke(service, run_yaml(assets, reward_funcs=["my_module.reward"]))  # the run policy: no imports
    assert imported.status_code == 422 and imported.json()["diagnostics"][0]["code"] == "GRPO-X001"

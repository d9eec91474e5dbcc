"""The runs endpoints over real HTTP: 401 without a valid token on every one, 403 when runs are off, and each
policy refusal as a 422 carrying a clear diagnostic. Nothing here is allowed to start a process."""

from __future__ import annotations

import json
import re

import pytest

from grpo_web.serve import with_runs_token
from grpo_web.settings import Settings
from tests.support.env import wait_for
from tests.support.service import TOKEN, Service

RUN = "0123456789ab"
ENDPOINTS = [
    ("POST", "/api/v1/runs"),
    ("GET", "/api/v1/runs"),
    ("GET", f"/api/v1/runs/{RUN}"),
    ("GET", f"/api/v1/runs/{RUN}/logs"),
    ("POST", f"/api/v1/runs/{RUN}/cancel"),
    ("POST", f"/api/v1/runs/{RUN}/resume"),
]
CONFIG = (
    "model_name_or_path: /models/tiny\ndataset_name: /data/prompts\nreward_funcs: [accuracy_reward]\n"
    "per_device_train_batch_size: 8\nnum_generations: 4\n"
)
BASE = CONFIG.replace("reward_funcs: [accuracy_reward]\n", "")  # the key under test goes on line 5


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    started = Service(tmp_path_factory.mktemp("security") / "runs").start()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def disabled(tmp_path_factory):
    started = Service(tmp_path_factory.mktemp("disabled") / "runs", runs=False).start()
    yield started
    started.stop()


def post(service: Service, text: str, token: str | None = TOKEN, **params):
    with service.client(token) as client:
        return client.post("/api/v1/runs", content=text, params=params, headers={"Content-Type": "application/yaml"})


@pytest.mark.parametrize("method,path", ENDPOINTS)
@pytest.mark.parametrize("authorization", [None, "Bearer", "Basic dXNlcjpwYXNz", "Bearer wrong-token", TOKEN])
def test_every_runs_endpoint_needs_the_bearer_token(service, method, path, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    with service.client(None) as client:
        answer = client.request(method, path, headers=headers, content=CONFIG if method == "POST" else None)
    assert answer.status_code == 401, answer.text
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert "Bearer" in answer.json()["detail"] or "not valid" in answer.json()["detail"]


def test_the_token_is_checked_before_the_body_is_read(service):
    with service.client(None) as client:
        answer = client.post("/api/v1/runs", content=b"x" * 5_000_000, headers={"Content-Type": "application/yaml"})
    assert answer.status_code == 401


@pytest.mark.parametrize("method,path", ENDPOINTS)
def test_runs_turned_off_answer_403_after_401(disabled, method, path):
    with disabled.client(None) as client:
        assert client.request(method, path).status_code == 401
    with disabled.client() as client:
        answer = client.request(
            method, path, content=CONFIG if method == "POST" else None, headers={"Content-Type": "application/yaml"}
        )
    assert answer.status_code == 403
    assert "GRPO_WEB_RUNS=1" in answer.json()["detail"] and "--enable-runs" in answer.json()["detail"]


def test_a_valid_config_passes_validate_on_the_same_service(service):
    # the refusals below are the runs policy's, not the validator's: /validate accepts the same config
    with service.client(None) as client:
        answer = client.post(
            "/api/v1/validate",
            content=CONFIG + "trust_remote_code: true\n",
            headers={"Content-Type": "application/yaml"},
        )
    assert answer.status_code == 200 and answer.json()["valid"] is True


REFUSALS = [
    ("reward_funcs: [my_pkg.rewards.cheat]\n", {}, "GRPO-X001", "reward_funcs", "dotted path"),
    ("env:\n  WANDB_PROJECT: stolen\n", {}, "GRPO-X002", "env.WANDB_PROJECT", "does not allow"),
    ("trust_remote_code: true\n", {}, "GRPO-X003", "trust_remote_code", "Python files"),
    ("model_init_kwargs: {trust_remote_code: true}\n", {}, "GRPO-X003", "model_init_kwargs", "Python files"),
    ("output_dir: /tmp/elsewhere\n", {}, "GRPO-X004", "output_dir", "outside"),
    ("output_dir: ../escape\n", {}, "GRPO-X004", "output_dir", "outside"),
    ("output_dir: ~/run\n", {}, "GRPO-X004", "output_dir", "outside"),
    ("resume_from_checkpoint: /etc/checkpoint-1\n", {}, "GRPO-X004", "resume_from_checkpoint", "outside"),
    ("", {"profile": "my_pkg.profile:PROFILE"}, "GRPO-X005", None, "module path"),
    ("", {"profile": "open-r1"}, "GRPO-X005", None, "TRL's keys only"),
    ("num_processes: 4\n", {}, "GRPO-X006", "num_processes", "4 processes"),
    ("", {"world_size": 2}, "GRPO-X006", None, "2 processes"),
    # what grpo_runtime cannot run, found without loading anything (grpo_runtime.support)
    ("debug: underflow_overflow\n", {}, "GRPO-U004", "debug", "debug modes"),
    (
        "transformers_continuous_batching_config: {max_memory: 0.4}\nuse_transformers_continuous_batching: true\n",
        {},
        "GRPO-U001",
        "transformers_continuous_batching_config",
        "ContinuousBatchingConfig",
    ),
]


@pytest.mark.parametrize(
    "extra,params,code,field,words", REFUSALS, ids=[r[2] + "-" + str(i) for i, r in enumerate(REFUSALS)]
)
def test_each_policy_refusal_is_a_422_with_a_clear_diagnostic(service, extra, params, code, field, words):
    reward = "" if extra.startswith("reward_funcs") else "reward_funcs: [accuracy_reward]\n"
    answer = post(service, BASE + extra + reward, **params)
    assert answer.status_code == 422, answer.text
    document = answer.json()
    assert document["valid"] is False and set(document) >= {"path", "world_size", "diagnostics", "derived"}
    found = [d for d in document["diagnostics"] if d["code"] == code]
    assert found, document["diagnostics"]
    diag = found[0]
    assert diag["severity"] == "error" and words in diag["message"] and diag["hint"], diag
    assert diag["fields"] == ([field] if field else [])
    if field:  # the position of the key in the posted file (env.NAME: its line inside env:)
        nested = field.startswith("env.")
        assert (diag["line"], diag["column"]) == (5 + nested, 3 if nested else 1), diag


def test_the_same_refusals_apply_to_a_json_body(service):
    body = {
        "model_name_or_path": "m",
        "dataset_name": "d",
        "reward_funcs": ["evil.module.reward"],
        "output_dir": "/root/x",
        "env": {"PYTHONPATH": "/tmp"},
    }
    with service.client() as client:
        answer = client.post("/api/v1/runs", json=body)
    assert answer.status_code == 422
    codes = {d["code"] for d in answer.json()["diagnostics"]}
    assert {"GRPO-X001", "GRPO-X004", "GRPO-E003"} <= codes  # E003: the validator's own refusal of PYTHONPATH


def test_an_invalid_config_is_a_422_with_the_validators_diagnostics(service):
    answer = post(service, CONFIG.replace("num_generations: 4", "num_generations: 3"))
    assert answer.status_code == 422
    assert "GRPO-B001" in {d["code"] for d in answer.json()["diagnostics"]}


def test_request_errors_keep_their_usual_answers(service):
    with service.client() as client:
        assert client.post("/api/v1/runs", content=CONFIG, headers={"Content-Type": "text/html"}).status_code == 415
        assert client.get(f"/api/v1/runs/{RUN}").status_code == 404
        assert client.post(f"/api/v1/runs/{RUN}/cancel").status_code == 404
        assert client.get("/api/v1/runs/not-an-id").status_code == 422
        assert client.get(f"/api/v1/runs/{RUN}/logs", params={"offset": -1}).status_code == 422


def test_nothing_was_started_by_the_refused_requests(service):
    with service.client() as client:
        assert client.get("/api/v1/runs").json() == {"runs": []}
    assert [p.name for p in service.runs_dir.iterdir() if p.is_dir()] == []


def test_without_a_configured_token_one_is_generated_printed_and_kept_for_the_next_start(tmp_path):
    started = Service(tmp_path / "runs", {"GRPO_WEB_TOKEN": ""}).start()
    try:
        wait_for(lambda: "runs page:" in started.log_text(), 10, "the token to be printed")
        token = re.search(r"bearer token: (\S+) \(new, kept in ", started.log_text()).group(1)
        assert len(token) >= 32 and f"/runs#token={token}" in started.log_text()
        assert f"/#token={token}" in started.log_text()  # the form's link
        kept = tmp_path / "runs" / "token"
        assert kept.read_text().strip() == token and kept.stat().st_mode & 0o777 == 0o600
        with started.client(token) as client:
            assert client.get("/api/v1/runs").status_code == 200
        with started.client() as client:  # the test token is not this service's
            assert client.get("/api/v1/runs").status_code == 401
        started.stop()
        started.start()  # a restart takes the kept token
        assert re.findall(r"bearer token: (\S+) \(kept in ", started.log_text()) == [token]
        with started.client(token) as client:
            assert client.get("/api/v1/runs").status_code == 200
        started.stop()
        kept.chmod(0o644)  # readable by others: not trusted, a new one replaces it
        started.start()
        fresh = re.findall(r"bearer token: (\S+) \(new: the one in .* could be read by other users", started.log_text())
        assert fresh and fresh[0] != token and kept.read_text().strip() == fresh[0]
        assert kept.stat().st_mode & 0o777 == 0o600
    finally:
        started.stop()


def test_runs_on_a_public_address_warn_about_tls(capsys):
    settings = with_runs_token(Settings(host="0.0.0.0", runs=True, token=TOKEN), "http://0.0.0.0:8000")
    assert settings.token.get_secret_value() == TOKEN
    err = capsys.readouterr().err
    assert "TLS" in err and TOKEN not in err  # a token the operator set is never printed


def test_the_service_never_passes_its_token_to_a_run(monkeypatch):
    from grpo_web.runs.launcher import child_environment

    monkeypatch.setenv("GRPO_WEB_TOKEN", TOKEN)
    environment = child_environment()
    assert not any(k.startswith("GRPO_WEB_") for k in environment) and TOKEN not in json.dumps(environment)

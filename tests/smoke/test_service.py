"""POST /api/v1/smoke on a real `grpo serve --enable-runs`: the token, the runs switch and the run checks
apply as for a run, and the answer is the `grpo smoke --format json` report."""

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service tests need the web extra")

from tests.support.run_config import run_yaml
from tests.support.service import TOKEN

pytestmark = pytest.mark.slow


def smoke(service, text, token=TOKEN, **params):
    with service.client(token) as client:
        client.timeout = 600
        return client.post("/api/v1/smoke", content=text, params=params, headers={"Content-Type": "application/yaml"})


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


PROBE = '''
import json
import os


def env_probe_reward(completions, **kwargs):
    """Writes the environment it runs in, then scores nothing."""
    with open(os.environ["SMOKE_ENV_PROBE"], "a") as handle:
        handle.write(json.dumps(dict(os.environ)) + "\\n")
    return [0.0] * len(completions)
'''


def test_the_smoke_process_never_sees_the_token(make_service, assets, tmp_path):
    """The smoke test runs the user's reward function; the environment it sees has none of the service's
    GRPO_WEB_* settings, so not its token (as a run's does not)."""
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "smoke_env_probe.py").write_text(PROBE)
    probe = tmp_path / "probe.jsonl"
    service = make_service(PYTHONPATH=str(modules), SMOKE_ENV_PROBE=str(probe), GRPO_WEB_RUNS_ALLOW_REWARD_IMPORTS="1")
    answer = smoke(service, run_yaml(assets, reward_funcs=["smoke_env_probe.env_probe_reward"]), steps=1)
    assert answer.status_code == 200, answer.text
    seen = [json.loads(line) for line in probe.read_text().splitlines()]
    assert seen, answer.json()  # the reward ran in the smoke process
    for env in seen:
        assert not [name for name in env if name.startswith("GRPO_WEB_")], sorted(env)
        assert not [name for name, value in env.items() if TOKEN in value]
        assert env["HF_HUB_OFFLINE"] == "1" and env["SMOKE_ENV_PROBE"] == str(probe)


def test_the_service_smoke_takes_a_trl_version_and_relative_paths(make_service, assets, tmp_path):
    folder = tmp_path / "service-folder"
    shutil.copytree(assets.model, folder / "demo" / "model")
    shutil.copytree(assets.data, folder / "demo" / "data")
    service = make_service(cwd=folder)
    text = run_yaml(assets).replace(str(assets.model), "./demo/model").replace(str(assets.data), "demo/data")
    answer = smoke(service, text, trl_version="1.16")
    report = answer.json()
    assert answer.status_code == 200 and report["passed"], report  # the smoke ran in its scratch folder
    assert report["trl_version"] == "1.16" and report["trl_version_source"] == "flag"
    bad = smoke(service, text, trl_version="0.3")
    assert bad.status_code == 422 and "detail" in bad.json()


def test_the_smoke_command_passes_the_release_and_the_resolved_paths():
    from grpo_web.api.smoke import smoke_command

    command = smoke_command(
        Path("/tmp/c.yaml"), 2, "trl", 60.0, ["OMP_NUM_THREADS"], {"model_name_or_path": "/srv/demo/model"}, "0.19.1"
    )
    assert command[command.index("--trl-version") + 1] == "0.19.1"
    assert command[command.index("--set") + 1] == 'model_name_or_path="/srv/demo/model"'
    assert command[command.index("--allow-env") + 1] == "OMP_NUM_THREADS"
    assert "--trl-version" not in smoke_command(Path("/tmp/c.yaml"), 2, "trl", 60.0, [])

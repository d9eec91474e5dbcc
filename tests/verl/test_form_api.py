"""The form's verl round trip over the HTTP API, in process: POST /api/v1/load reads a verl file with verl's engine
(diagnostics with the verl file's lines, the schedule card, the conversion to TRL) and POST /api/v1/convert writes
the form's TRL config back as a verl launch script, the same text `grpo convert --to verl` writes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from grpo_schema.cli import main
from grpo_web.app import create_app
from grpo_web.settings import Settings
from tests.support.verl_runs import RUN

YAML_HEADERS = {"content-type": "application/yaml"}


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Settings(max_body_bytes=64_000, max_world_size=64))) as client:
        yield client


def test_load_converts_a_verl_script_and_shows_its_schedule(client) -> None:
    loaded = client.post("/api/v1/load", content=RUN.encode(), headers=YAML_HEADERS).json()
    assert loaded["dialect"] == "verl" and loaded["refused"] == ""
    config = loaded["config"]
    assert (config["num_generations"], config["per_device_train_batch_size"], config["num_processes"]) == (8, 4, 8)
    assert yaml.safe_load(loaded["trl_yaml"]) == config  # the text the export keeps is the same config
    assert "# lossy: loss_agg_mode token-mean -> loss_type dapo" in loaded["trl_yaml"]
    card = "\n".join(loaded["cards"][0]["lines"])
    assert "data.train_batch_size" in card and "TRL generation_batch_size=512, num_generations=8" in card


def test_load_shows_verl_diagnostics_and_the_refusal(client) -> None:
    text = RUN.replace("ppo_mini_batch_size=16", "ppo_mini_batch_size=128")  # more prompts than the RL step has
    loaded = client.post("/api/v1/load", content=text.encode(), headers=YAML_HEADERS).json()
    errors = [d for d in loaded["diagnostics"] if d["severity"] == "error"]
    assert loaded["config"] is None and loaded["refused"] and errors
    (found,) = [d for d in errors if d["code"] == "GRPO-Q014"]
    assert found["line"] == 3 and "ppo_mini_batch_size" in found["message"]  # data.train_batch_size's line


def test_convert_writes_the_cli_s_verl_script(client, tmp_path: Path, capsys) -> None:
    loaded = client.post("/api/v1/load", content=RUN.encode(), headers=YAML_HEADERS).json()
    config = {**loaded["config"], "dataset_name": "openai/gsm8k", "reward_funcs": ["accuracy_reward"]}
    answer = client.post("/api/v1/convert", json={"config": config, "to": "verl"}).json()
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["convert", str(path), "--to", "verl"]) == 0
    assert answer["refused"] == "" and answer["text"] == capsys.readouterr().out
    assert "data.train_batch_size=64" in answer["text"] and "actor_rollout_ref.rollout.n=8" in answer["text"]
    refused = client.post("/api/v1/convert", json={"config": loaded["config"], "to": "verl"}).json()
    # names its first problem: no reward_funcs (R004) or no dataset (S002), whichever the rules report first
    assert refused["text"] == "" and re.search(r"\(GRPO-(R004|S002): ", refused["refused"]), refused["refused"]
    assert client.post("/api/v1/convert", json={"config": config, "to": "trl"}).status_code == 422

"""GET/POST /api/v1/doctor against a real server: the service's own environment (the interpreter its runs use),
the same document as `grpo doctor --format json` on this interpreter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from grpo_web.api.doctor import TRL_ONLY
from tests.support.cli import grpo

ROOT = Path(__file__).resolve().parents[2]
LIGER = "model_name_or_path: Qwen/Qwen3-0.6B\ndataset_name: d\noutput_dir: out\nuse_liger_kernel: true\n"


def test_get_doctor_is_the_cli_on_the_same_interpreter(live_server):
    with live_server.client() as client:
        response = client.get("/api/v1/doctor")
    assert response.status_code == 200
    doc = response.json()
    cli = json.loads(grpo("doctor", "--format", "json", cwd=ROOT).stdout)
    assert doc["environment"]["packages"] == cli["environment"]["packages"]
    assert doc["environment"]["origin"] == sys.executable and doc["trl_release"] == cli["trl_release"]
    # the service's runs train with grpo_runtime: what concerns trl itself is left out, the rest is the CLI's
    assert doc["runs_with"] == "grpo_runtime"
    assert {d["code"] for d in doc["diagnostics"]} == {d["code"] for d in cli["diagnostics"]} - TRL_ONLY


def test_the_launch_dialog_judges_the_runtime_the_service_runs_not_trl(tmp_path, capsys):
    """An environment without trl (as `bash scripts/serve.sh` installs the service) runs grpo_runtime: no "trl is
    not installed", while `grpo doctor` on the same environment, judging for `trl grpo`, says it with its source
    in words, not "(flag)"."""
    from grpo_schema.cli import main
    from grpo_schema.doctor import read
    from grpo_web.api.doctor import service_runs_document

    freeze = tmp_path / "freeze.txt"
    freeze.write_text("torch==2.13.0\ntransformers==5.2.0\naccelerate==1.10.0\ndatasets==4.0.0\n")
    config = tmp_path / "demo.yaml"
    config.write_text(LIGER.replace("use_liger_kernel: true\n", ""))
    doc = service_runs_document(read(freeze=str(freeze)))
    assert [d["code"] for d in doc["diagnostics"]] == [] and doc["ok"] is True and doc["runs_with"] == "grpo_runtime"
    main(["doctor", str(config), "--freeze", str(freeze), "--trl-version", "0.19", "--format", "json"])
    cli = json.loads(capsys.readouterr().out)
    no_trl = [d for d in cli["diagnostics"] if d["code"] == "GRPO-C001"]
    assert no_trl and no_trl[0]["message"].endswith("the file is for TRL 0.19 (--trl-version)"), no_trl


def test_post_doctor_judges_the_config_features_and_reads_no_client_path(live_server, tmp_path):
    ds = tmp_path / "ds.json"
    ds.write_text('{"zero_optimization": {"stage": 3}}')
    with live_server.client() as client:
        doc = client.post(
            "/api/v1/doctor", content=LIGER + f"deepspeed: {ds}\n", headers={"Content-Type": "application/yaml"}
        ).json()
        bad = client.post("/api/v1/doctor", content="a: [", headers={"Content-Type": "application/yaml"})
    installed = doc["environment"]["packages"]
    liger = [d for d in doc["diagnostics"] if d["code"] == "GRPO-C006"]
    assert bool(liger) == (installed["liger-kernel"] is None)
    if liger:
        assert liger[0]["line"] == 4 and "liger-kernel>=" in liger[0]["hint"] and doc["ok"] is False
    assert "deepspeed" in doc["features"] and "zero3" not in doc["features"]  # the file was not opened
    assert bad.status_code == 200 and bad.json()["diagnostics"][0]["code"].startswith("GRPO-Y")

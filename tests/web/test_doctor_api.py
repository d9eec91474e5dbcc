"""GET/POST /api/v1/doctor against a real server: the service's own environment (the interpreter its runs use),
the same document as `grpo doctor --format json` on this interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIGER = "model_name_or_path: Qwen/Qwen3-0.6B\ndataset_name: d\noutput_dir: out\nuse_liger_kernel: true\n"


def test_get_doctor_is_the_cli_on_the_same_interpreter(live_server):
    with live_server.client() as client:
        response = client.get("/api/v1/doctor")
    assert response.status_code == 200
    doc = response.json()
    cli = json.loads(subprocess.run([sys.executable, "-m", "grpo_schema", "doctor", "--format", "json"],
                                    capture_output=True, text=True, cwd=ROOT, timeout=120).stdout)
    assert doc["environment"]["packages"] == cli["environment"]["packages"]
    assert doc["environment"]["origin"] == sys.executable and doc["trl_release"] == cli["trl_release"]
    assert {d["code"] for d in doc["diagnostics"]} == {d["code"] for d in cli["diagnostics"]}


def test_post_doctor_judges_the_config_features_and_reads_no_client_path(live_server, tmp_path):
    ds = tmp_path / "ds.json"
    ds.write_text('{"zero_optimization": {"stage": 3}}')
    with live_server.client() as client:
        doc = client.post("/api/v1/doctor", content=LIGER + f"deepspeed: {ds}\n",
                          headers={"Content-Type": "application/yaml"}).json()
        bad = client.post("/api/v1/doctor", content="a: [", headers={"Content-Type": "application/yaml"})
    installed = doc["environment"]["packages"]
    liger = [d for d in doc["diagnostics"] if d["code"] == "GRPO-C006"]
    assert bool(liger) == (installed["liger-kernel"] is None)
    if liger:
        assert liger[0]["line"] == 4 and "liger-kernel>=" in liger[0]["hint"] and doc["ok"] is False
    assert "deepspeed" in doc["features"] and "zero3" not in doc["features"]  # the file was not opened
    assert bad.status_code == 200 and bad.json()["diagnostics"][0]["code"].startswith("GRPO-Y")

"""POST /api/v1/plan against a real server: the same document as `grpo plan --format json`."""

from grpo_schema.commands.plan import check_for_hardware
from tests.support.configs import BIG, SMALL


def test_plan_endpoint_fits(live_server):
    with live_server.client() as client:
        response = client.post(
            "/api/v1/plan",
            params={"hardware": "8xH100-80GB"},
            content=SMALL,
            headers={"Content-Type": "application/yaml"},
        )
    assert response.status_code == 200
    doc = response.json()
    assert doc["fits"] is True and doc["per_gpu"]["parts"] and doc["world_size"] == 8


def test_plan_endpoint_no_fit_carries_the_fix(live_server):
    with live_server.client() as client:
        doc = client.post(
            "/api/v1/plan?hardware=1xH100-80GB", content=BIG, headers={"Content-Type": "application/yaml"}
        ).json()
    assert doc["fits"] is False
    assert any(d["code"] == "GRPO-H001" and d["fix"] for d in doc["diagnostics"])


def test_plan_endpoint_refuses_bad_hardware_and_never_reads_local_paths(live_server, tmp_path):
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    with live_server.client() as client:
        bad = client.post("/api/v1/plan?hardware=9xWHAT", content=SMALL, headers={"Content-Type": "application/yaml"})
        local = client.post(
            "/api/v1/plan?hardware=80GB",
            content=f"model_name_or_path: {tmp_path}\n",
            headers={"Content-Type": "application/yaml"},
        ).json()
    assert bad.status_code == 422
    assert local["model"] is None and any(d["code"] == "GRPO-H005" for d in local["diagnostics"])


def test_plan_endpoint_gives_the_memory_lines_grpo_validate_prints(live_server):
    from grpo_schema.commands.plan import check_for_hardware, memory_lines

    with live_server.client() as client:
        doc = client.post(
            "/api/v1/plan",
            params={"hardware": "p4d.24xlarge", "engine": "trl"},
            content=SMALL,
            headers={"Content-Type": "application/yaml"},
        ).json()
    from grpo_web.runs.paths import RUNS_OFF

    _, report = check_for_hardware(
        SMALL, "<request>", "p4d.24xlarge", local_files=False, batch_fixes=False, reads=RUNS_OFF
    )  # what a service with runs off reads: nothing a client names
    assert doc["memory_lines"] == memory_lines(report)
    assert any(line.startswith("host RAM per node:") and "1152 GiB" in line for line in doc["memory_lines"])


def test_plan_endpoint_reads_no_dataset_a_client_names(live_server, tmp_path):
    """With runs off, a local dataset path is a file a client names: the service plans at its default prompt length
    and says so, and how to get the data's, where `grpo plan` on this machine would read the data
    (tests/runs/test_plan_reads.py: with runs on)."""
    import json

    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps({"prompt": "x" * 40000}) + "\n" for _ in range(3)))
    config = SMALL.replace("trl-lib/DeepMath-103K", str(data))
    with live_server.client() as client:
        doc = client.post(
            "/api/v1/plan",
            params={"hardware": "8xH100-80GB"},
            content=config,
            headers={"Content-Type": "application/yaml"},
        ).json()
    assert doc["prompt_lengths"] is None and doc["settings"]["prompt_length"] == 512
    assert any(
        line.startswith("assumes prompts of 512 tokens (a default: the service reads no dataset while its runs are off")
        and "grpo serve --enable-runs" in line
        for line in doc["memory_lines"]
    )
    _, local = check_for_hardware(config, "run.yaml", "8xH100-80GB", batch_fixes=False)
    assert local.prompts is not None and local.setup.prompt_length == 10000  # 40,000 characters at 4 a token

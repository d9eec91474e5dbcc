"""push_to_hub against a local HTTP server that implements the Hub endpoints huggingface_hub calls for an upload
(create_repo, create_branch, preupload, commit), and against an endpoint nothing listens on.

What this covers: the real huggingface_hub client, run by grpo_runtime at the HF Trainer's points, talks HTTP to
the server: which repository is created (and whether private), which branch, which commits with which messages
and file paths, and that the token comes from the environment. What it does not cover: the real Hub's answers
(LFS/Xet uploads of large files, permissions, rate limits); the server answers "regular" upload for every file, so
files travel inline in the commit.
"""

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from grpo_runtime.launch.cli import train_command

from .helpers import base_settings, write_prompts


class FakeHub(BaseHTTPRequestHandler):
    log: list = []  # (method, path, authorization, body) of every request, in order

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        FakeHub.log.append(("POST", self.path, self.headers.get("authorization"), body))
        endpoint = f"http://127.0.0.1:{self.server.server_port}"
        parts = self.path.split("?")[0].split("/")
        if self.path.startswith("/api/repos/create"):
            request = json.loads(body)
            owner = request.get("organization") or "someone"
            return self.reply({"url": f"{endpoint}/{owner}/{request['name']}"})
        if "/preupload/" in self.path:
            files = json.loads(body)["files"]
            return self.reply(
                {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]}
            )
        if "/commit/" in self.path:
            repo = "/".join(parts[3:5])
            return self.reply({"commitUrl": f"{endpoint}/{repo}/commit/{'a' * 40}", "commitOid": "a" * 40})
        if "/branch/" in self.path:
            return self.reply({})
        self.send_error(404)

    def reply(self, payload):
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def allow_http_to_the_endpoint(monkeypatch):
    """The runtime tests run with HF_HUB_OFFLINE=1 (nothing may reach the real Hub); these tests send requests,
    but only to the local endpoint set above."""
    import huggingface_hub.constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False, raising=False)


@pytest.fixture
def hub(monkeypatch):
    import huggingface_hub.constants

    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    FakeHub.log = []
    url = f"http://127.0.0.1:{server.server_port}"
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", url)  # what HF_ENDPOINT sets at import
    allow_http_to_the_endpoint(monkeypatch)
    monkeypatch.setenv("HF_TOKEN", "hf_from_the_environment")
    yield url
    server.shutdown()


def commits(log):
    """(path, commit summary, file paths) of each commit request."""
    found = []
    for method, path, _, body in log:
        if "/commit/" in path:
            lines = [json.loads(line) for line in body.decode().splitlines()]
            header = next(x["value"] for x in lines if x["key"] == "header")
            files = sorted(x["value"]["path"] for x in lines if x["key"] == "file")
            found.append((path, header["summary"], files))
    return found


def run_config(tmp_path, tiny_model_dir, **fields):
    settings = base_settings(tiny_model_dir, write_prompts(tmp_path / "data.jsonl"), tmp_path / "out")
    settings.update(max_steps=2, save_steps=1, push_to_hub=True, **fields)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(settings))
    return config


@pytest.mark.slow
def test_checkpoint_strategy_pushes_each_save_and_the_end(tmp_path, tiny_model_dir, hub):
    config = run_config(
        tmp_path,
        tiny_model_dir,
        hub_model_id="lab/tiny-grpo",
        hub_strategy="checkpoint",
        hub_private_repo=True,
        hub_revision="run-1",
        hub_always_push=True,
    )
    assert train_command([str(config)]) == 0

    create = json.loads(next(body for _, path, _, body in FakeHub.log if path == "/api/repos/create"))
    assert create["name"] == "tiny-grpo" and create["organization"] == "lab" and create["visibility"] == "private"
    assert any(path == "/api/models/lab/tiny-grpo/branch/run-1" for _, path, _, _ in FakeHub.log)
    assert {auth for _, _, auth, _ in FakeHub.log} == {"Bearer hf_from_the_environment"}
    pushed = commits(FakeHub.log)
    assert all(path == "/api/models/lab/tiny-grpo/commit/run-1" for path, _, _ in pushed)
    summaries = [summary for _, summary, _ in pushed]
    assert sorted(summaries[:4]) == [
        "Training in progress, step 1",
        "Training in progress, step 1, checkpoint",
        "Training in progress, step 2",
        "Training in progress, step 2, checkpoint",
    ]
    assert summaries[-1] == "End of training"
    checkpoint_files = next(files for _, summary, files in pushed if summary.endswith("step 2, checkpoint"))
    assert "last-checkpoint/model.safetensors" in checkpoint_files
    assert "last-checkpoint/optimizer.pt" in checkpoint_files
    final_files = pushed[-1][2]
    assert "model.safetensors" in final_files and "run_info.json" in final_files
    assert not any(f.startswith("checkpoint-") for f in final_files)
    # the uploaded weights are the saved ones
    final = [json.loads(line) for line in FakeHub.log[-1][3].decode().splitlines()]
    weights = next(x["value"] for x in final if x["key"] == "file" and x["value"]["path"] == "model.safetensors")
    assert base64.b64decode(weights["content"]) == (tmp_path / "out" / "model.safetensors").read_bytes()


@pytest.mark.slow
def test_end_strategy_pushes_once_named_after_output_dir(tmp_path, tiny_model_dir, hub):
    config = run_config(tmp_path, tiny_model_dir, hub_strategy="end")
    assert train_command([str(config)]) == 0
    assert json.loads(FakeHub.log[0][3])["name"] == "out"  # no hub_model_id: output_dir's name
    assert [summary for _, summary, _ in commits(FakeHub.log)] == ["End of training"]


@pytest.mark.slow
def test_an_unreachable_hub_is_reported_and_the_local_run_is_kept(tmp_path, tiny_model_dir, monkeypatch, capsys):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")  # discard port: refused
    allow_http_to_the_endpoint(monkeypatch)
    monkeypatch.setenv("HF_TOKEN", "hf_from_the_environment")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    config = run_config(
        tmp_path, tiny_model_dir, hub_model_id="lab/tiny-grpo", hub_strategy="every_save", save_total_limit=1
    )
    assert train_command([str(config)]) == 4
    err = capsys.readouterr().err
    assert "could not create the Hub repository 'lab/tiny-grpo'" in err
    assert "the final push to the Hub repository 'lab/tiny-grpo' failed" in err
    assert "the trained model is saved in" in err
    out = tmp_path / "out"
    assert (out / "model.safetensors").exists() and (out / "checkpoint-2" / "runtime_state.json").exists()
    assert len((out / "metrics.jsonl").read_text().splitlines()) == 2

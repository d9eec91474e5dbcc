"""`grpo serve`, settings, and the promises around the service: loopback by default, no torch, offline assets."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import httpx
import pytest

from grpo_web.pages import STATIC_DIR
from grpo_web.serve import exposure_warning, serve_command
from grpo_web.settings import Settings, is_loopback_host
from tests.support.env import free_port


def test_grpo_serve_starts_the_service_on_loopback():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "grpo_schema", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline, answer = time.monotonic() + 30, None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert answer is not None and answer.json() == {"status": "ok"}
        page = httpx.get(f"http://127.0.0.1:{port}/")
        assert page.status_code == 200 and "<title>grpo-config" in page.text
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0]
    assert f"http://127.0.0.1:{port}/" in output and "warning" not in output


def test_grpo_serve_with_two_workers_validates_with_the_command_line_settings():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "grpo_schema", "serve", "--port", str(port), "--workers", "2", "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline, answers = time.monotonic() + 60, []
        while time.monotonic() < deadline and process.poll() is None and not answers:
            try:
                answers.append(httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1))
            except httpx.HTTPError:
                time.sleep(0.2)
        assert answers and answers[0].json() == {"status": "ok"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            for _ in range(20):  # spread over both processes; each must answer the same
                reply = client.post(
                    "/api/v1/validate?world_size=3",
                    content=b"num_generations: 16\nper_device_train_batch_size: 2\n",
                    headers={"content-type": "application/yaml"},
                )
                assert reply.status_code == 200
                assert "GRPO-B001" in [d["code"] for d in reply.json()["diagnostics"]], reply.text
    finally:
        process.terminate()
        output = process.communicate(timeout=20)[0]
    assert "Traceback" not in output, output


@pytest.mark.parametrize(
    "argv,message", [(["--workers", "0"], "at least 1"), (["--workers", "2", "--enable-runs"], "cannot serve runs")]
)
def test_serve_refuses_workers_it_cannot_honour(argv, message, capsys):
    assert serve_command(argv) == 2
    assert message in capsys.readouterr().err


def test_defaults_bind_loopback_and_env_settings_apply(monkeypatch):
    assert Settings().host == "127.0.0.1" and Settings().port == 8000
    monkeypatch.setenv("GRPO_WEB_PORT", "9123")
    monkeypatch.setenv("GRPO_WEB_MAX_BODY_BYTES", "4096")
    settings = Settings()
    assert settings.port == 9123 and settings.max_body_bytes == 4096


@pytest.mark.parametrize(
    "host,loopback",
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.com", False),
    ],
)
def test_binding_outside_loopback_warns(host, loopback):
    assert is_loopback_host(host) is loopback
    warning = exposure_warning(Settings(host=host))
    assert (warning is None) is loopback
    if warning:
        assert host in warning and "TLS" in warning


def test_serve_refuses_a_bad_port(capsys):
    assert serve_command(["--port", "70000"]) == 2
    assert "port" in capsys.readouterr().err


def test_the_service_never_imports_torch_or_the_runtime():
    code = (
        "import sys; from grpo_web.app import create_app; import grpo_web.serve; app = create_app();"
        "from fastapi.testclient import TestClient; c = TestClient(app);"
        "c.post('/api/v1/explain', json={'num_generations': 4}); c.get('/api/v1/schema');"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers', 'grpo_runtime'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ})
    assert done.returncode == 0, done.stdout + done.stderr


def test_static_assets_work_offline():
    """No CDN: every asset the page loads is served by the project."""
    for path in STATIC_DIR.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"(src|href)=[\"']?(https?:)?//", text), path
            assert "import(" not in text or "http" not in text, path


def test_page_and_assets_carry_a_strict_csp(live_server):
    with live_server.client() as http:
        page = http.get("/")
        script = http.get("/static/js/main.js")
        api = http.get("/api/v1/presets")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert "content-security-policy" in script.headers and "content-security-policy" not in api.headers


def test_the_slurm_backend_imports_no_torch():
    """A service that submits Slurm jobs loads the stdlib-only Slurm engine, never the trainer."""
    code = (
        "import sys; import grpo_web.runs.slurm as s; from grpo_web.settings import Settings;"
        "s.layout_for(Settings(runs_backend='slurm'), 1, None); s.SlurmBackend(Settings(runs_backend='slurm')).cluster;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers'));"
        "print(bad); sys.exit(1 if bad or 'grpo_runtime.clusters.slurm.scheduler' not in sys.modules else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ})
    assert done.returncode == 0, done.stdout + done.stderr

"""Fixtures for the service tests: a real uvicorn on a free 127.0.0.1 port, one per test module.

The server runs in a thread of the test process (no mocks: real sockets, real HTTP parsing, the app as served by
`grpo serve`). Corpus paths come from ../shared relative to the project root; tests that need them skip clearly
when that folder is absent.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi", reason="the service tests need the web extra (pip install -e '.[web]')")
uvicorn = pytest.importorskip("uvicorn", reason="the service tests need uvicorn (pip install -e '.[web]')")

from grpo_web.app import create_app  # noqa: E402
from grpo_web.settings import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "grpo-corpus"


@dataclass
class LiveServer:
    url: str
    settings: Settings

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kwargs)


def start_server(settings: Settings) -> tuple[uvicorn.Server, threading.Thread, str]:
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True, name="uvicorn-under-test")
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    _wait_healthy(url)
    return server, thread, url


def _wait_healthy(url: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).json() == {"status": "ok"}:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url}/healthz never answered")


@pytest.fixture(scope="module")
def live_server():
    settings = Settings(max_body_bytes=200_000)
    server, thread, url = start_server(settings)
    yield LiveServer(url, settings)
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The reference corpus; tests that take it are deselected where ../shared is absent (tests/conftest.py)."""
    return CORPUS

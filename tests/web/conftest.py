"""Fixtures for the service tests: a real uvicorn on a free 127.0.0.1 port, one per test module.

The server runs in a thread of the test process (tests/support/service.py) (no mocks: real sockets, real HTTP parsing, the app as served by
`grpo serve`). Corpus paths come from ../shared relative to the project root; tests that need them skip clearly
when that folder is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service tests need the web extra (pip install -e '.[web]')")
uvicorn = pytest.importorskip("uvicorn", reason="the service tests need uvicorn (pip install -e '.[web]')")

from grpo_web.settings import Settings  # noqa: E402
from tests.support.service import LiveServer, start_server  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "grpo-corpus"


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

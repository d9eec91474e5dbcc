"""The session fixtures every folder shares (registered by tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """The tiny random-init model and its tokenizer saved once for the whole run (tests/support/tiny.py).
    Shared: read it, never write into it."""
    pytest.importorskip("torch", reason="the tiny model needs torch (pip install -e '.[runtime]')")
    pytest.importorskip("transformers", reason="the tiny model needs transformers (pip install -e '.[runtime]')")
    from tests.support.tiny import save_tiny_model

    return save_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(autouse=True)
def playwright_loop_only_in_browser_tests(request):
    """The run's Playwright marks its event loop as running between its calls; only a test that uses the browser
    sees it so, the others can run event loops of their own (tests/support/browser.py)."""
    if "browser" not in request.fixturenames:
        yield
        return
    from tests.support.browser import resume_loop, suspend_loop

    resume_loop()
    yield
    suspend_loop()


@pytest.fixture(scope="session")
def browser():
    """The run's headless Chromium (tests/support/browser.py); open a context per test and close it."""
    from tests.support.browser import shared_browser, sync_api_or_skip

    return shared_browser(sync_api_or_skip())


@pytest.fixture(scope="session")
def assets(tmp_path_factory, tiny_model_dir):
    """The small run's inputs (tests/support/run_config.py): the tiny model and the demo prompts."""
    from tests.support.run_config import write_assets

    return write_assets(tmp_path_factory.mktemp("assets"), tiny_model_dir)


@pytest.fixture
def make_service(tmp_path):
    """make(cwd=None, **env): `grpo serve --enable-runs` processes over one runs directory (each start a restart of
    the same service), killed with the runs they left when the test ends (tests/support/service.py)."""
    pytest.importorskip("httpx", reason="the service tests need httpx (pip install -e '.[test]')")
    pytest.importorskip("fastapi", reason="the service tests need the web extra (pip install -e '.[web]')")
    from tests.support.service import services

    with services(tmp_path / "runs") as make:
        yield make

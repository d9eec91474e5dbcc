"""One headless Chromium for the whole test run (Debian's /usr/bin/chromium through Playwright's executable_path;
never `playwright install`), with a new context per test: the one place that says how it starts.

Starting Chromium costs seconds on 2 busy cores; a context costs milliseconds and shares nothing (cookies, storage,
tabs) with the others. Playwright's sync API allows one instance per thread, so every browser test takes it from
here; the run closes it at the end (tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
_STARTED: dict = {}


def sync_api_or_skip():
    """playwright.sync_api, skipping the calling module when playwright or Debian's chromium is missing."""
    api = pytest.importorskip(
        "playwright.sync_api", reason="the browser tests need playwright (pip install playwright)"
    )
    if not CHROMIUM.exists():
        pytest.skip(
            f"the browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)",
            allow_module_level=True,
        )
    return api


def shared_browser(sync_api=None):
    """The run's Chromium, started on first use (and again if it went away)."""
    browser = _STARTED.get("browser")
    if browser is not None and browser.is_connected():
        return browser
    api = sync_api or sync_api_or_skip()
    if "playwright" not in _STARTED:
        _STARTED["manager"] = api.sync_playwright()
        _STARTED["playwright"] = _STARTED["manager"].start()
    _STARTED["browser"] = _STARTED["playwright"].chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
    return _STARTED["browser"]


def _loop():
    return getattr(_STARTED.get("manager"), "_loop", None)


def resume_loop() -> None:
    """Mark Playwright's event loop as this thread's running loop again, as its sync API keeps it between calls."""
    loop = _loop()
    if loop is not None and not loop.is_closed():
        asyncio._set_running_loop(loop)


def suspend_loop() -> None:
    """Between tests, no running loop: Playwright's sync API leaves its loop marked as running in this thread after
    every call, and the tests after a browser test that call asyncio.run() (or start a loop) would be refused."""
    if _loop() is not None:
        asyncio._set_running_loop(None)


def close_shared_browser() -> None:
    """Close the run's Chromium and Playwright, if they were started."""
    resume_loop()
    browser, playwright = _STARTED.pop("browser", None), _STARTED.pop("playwright", None)
    _STARTED.pop("manager", None)
    with contextlib.suppress(Exception):
        if browser is not None:
            browser.close()
    with contextlib.suppress(Exception):
        if playwright is not None:
            playwright.stop()


@contextlib.contextmanager
def chromium(sync_api=None):
    """The run's Chromium (kept open for the next test: close the contexts and pages you open)."""
    yield shared_browser(sync_api)


@contextlib.contextmanager
def open_page(browser=None, **context):
    """A page in a fresh context (cookies, storage, tabs of its own) of the run's Chromium, closed on exit."""
    opened = (browser or shared_browser()).new_context(**context)
    try:
        yield opened.new_page()
    finally:
        with contextlib.suppress(Exception):
            opened.close()


@contextlib.contextmanager
def form_page(browser, url: str, clear_storage: bool = True, **context):
    """The form at `url` in a fresh context, ready (its first validation drawn) with an empty localStorage; the test
    fails on any page error or console error the page logged meanwhile."""
    with open_page(browser, **{"viewport": {"width": 1366, "height": 900}, **context}) as page:
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
        page.goto(url + "/")
        page.wait_for_selector("body[data-ready=true]", timeout=15_000)
        if clear_storage:
            page.evaluate("localStorage.clear()")
        yield page
    assert problems == [], problems

"""Debian's Chromium driven by Playwright (never `playwright install`): the one place that says how it starts."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def sync_api_or_skip():
    """playwright.sync_api, skipping the calling module when playwright or Debian's chromium is missing."""
    api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright (pip install playwright)")
    if not CHROMIUM.exists():
        pytest.skip(f"the browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)",
                    allow_module_level=True)
    return api


@contextlib.contextmanager
def chromium(sync_api):
    """A headless Chromium, closed on exit."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()

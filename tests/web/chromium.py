"""Chromium for the browser tests is started in one place, tests/support/browser.py (one per test run)."""

from tests.support.browser import ARGS, CHROMIUM, chromium, sync_api_or_skip  # noqa: F401

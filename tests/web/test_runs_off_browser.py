"""A service started without runs (`grpo serve`), in headless Chromium: the Launch dialog and the runs page say that
runs are off and how the operator turns them on, instead of asking for a token that was never printed."""

from __future__ import annotations

import pytest

from tests.support.browser import open_page, sync_api_or_skip

pytestmark = [pytest.mark.browser]
sync_api_or_skip()


def test_launch_and_the_runs_page_say_runs_are_off_rather_than_ask_for_a_token(browser, live_server):
    with open_page(browser, viewport={"width": 1366, "height": 800}) as page:
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.goto(live_server.url + "/")
        page.wait_for_selector("body[data-ready=true]", timeout=20_000)
        page.click("#launch-open")
        page.wait_for_selector("#launch-dialog[open]")
        page.wait_for_function("() => document.getElementById('launch-blocked').textContent.length > 0")
        said = page.inner_text("#launch-blocked")
        assert "Runs are off" in said and "grpo serve --enable-runs" in said
        assert page.is_disabled("#launch-apply") and page.is_disabled("#launch-token")
        assert "Paste the token" not in page.inner_text("#launch-dialog")  # was: asked for a token that never was
        page.keyboard.press("Escape")

        page.goto(live_server.url + "/runs")
        page.wait_for_selector("body[data-ready=true]", timeout=20_000)
        assert page.locator("#runs-off").is_visible() and "--enable-runs" in page.inner_text("#runs-off")
        assert page.locator("#token-form").is_hidden() and page.locator("#token-needed").is_hidden()
        assert problems == []

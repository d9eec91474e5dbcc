"""The runs page in the run's Chromium (tests/support/browser.py): the `page` fixture (a fresh context per test,
failing the test on any page error or console error it did not ask for) and the steps the runs tests share.
Screenshots go to test-artifacts/screenshots/runs-*.png for a person to look at."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"


@pytest.fixture
def page(browser, make_service):  # closed before the services stop, so its polling never meets a stopped service
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on(
        "console",
        lambda msg: (
            problems.append(msg.text)
            if msg.type == "error"
            and "401" not in msg.text
            and "422" not in msg.text  # refusals the test asks for
            and not ("404" in msg.text and getattr(page, "expect_404", False))
            and not ("409" in msg.text and getattr(page, "expect_409", False))
            else None
        ),
    )
    yield page
    context.close()
    assert problems == [], problems


def shot(page, name: str, full_page: bool = True) -> None:
    """A screenshot for people to look at; full_page=False where the page holds megabytes of text (a full-page
    picture of it is tens of thousands of pixels tall and can take Chromium longer than the timeout)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"runs-{name}.png"), full_page=full_page)


def import_config(page, text: str) -> None:
    page.click("#import-open")
    page.fill("#import-text", text)
    page.click("#import-apply")
    page.wait_for_function("() => !document.getElementById('import-dialog').open")
    page.wait_for_function("() => /Valid/.test(document.getElementById('status').textContent)", timeout=15_000)


def press_launch(page, token: str) -> None:
    page.click("#launch-open")
    page.fill("#launch-token", token)
    page.click("#launch-apply")


def shown_indexes(page, selector: str = "#completions-list .completion") -> list[int]:
    """The data-index of each completion the page shows, in the order shown."""
    return [int(x) for x in page.eval_on_selector_all(selector, "items => items.map(i => i.dataset.index)")]

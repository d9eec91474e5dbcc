"""The per-GPU memory bar in headless Chromium: drawn beside the batch schedule, redrawn as the config and the
hardware change. Screenshots go to test-artifacts/screenshots/memory-*.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser import form_page, sync_api_or_skip
from tests.support.configs import BIG, SMALL

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"

pytestmark = pytest.mark.browser
sync_api = sync_api_or_skip()


@pytest.fixture
def page(browser, live_server):
    with form_page(browser, live_server.url, clear_storage=False) as page:
        yield page


def import_yaml(page, text: str) -> None:
    page.click("#import-open")
    page.fill("#import-text", text)
    page.click("#import-apply")


def test_memory_bar_follows_the_config_and_the_hardware(page):
    import_yaml(page, SMALL)
    page.wait_for_selector(
        "#memory-panel[data-fits='true'] #memory-bar .memory-part[data-part='weights']", timeout=15_000
    )
    parts = page.eval_on_selector_all("#memory-bar .memory-part", "els => els.map(e => e.dataset.part)")
    assert {"weights", "optimizer", "activations", "logits", "framework"} <= set(parts)
    assert "of 80.0 GiB per GPU: fits" in page.text_content("#memory-summary")
    page.locator("#memory-panel").scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "memory-fits.png"), full_page=True)

    import_yaml(page, BIG)  # a 7B model with vLLM colocated on one GPU's worth of memory each: over
    page.fill("#hardware", "1xH100-80GB")
    page.wait_for_selector(
        "#memory-panel[data-fits='false'] #memory-bar.over .memory-part[data-part='vllm']", timeout=15_000
    )
    assert "does not fit" in page.text_content("#memory-summary")
    page.locator("#memory-panel").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "memory-does-not-fit.png"), full_page=True)

    page.fill("#hardware", "2xB200")  # another GPU: redrawn against its memory without another edit
    page.wait_for_function(
        "() => document.getElementById('memory-summary').textContent.includes('of 180.0 GiB')", timeout=15_000
    )

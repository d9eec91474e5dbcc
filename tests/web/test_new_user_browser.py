"""What a first-time user met in the form, in headless Chromium against a live service, each fixed and kept fixed:
counts that agree with their noun."""

from __future__ import annotations

import pytest

from tests.support.form_page import fill_field, page, server  # noqa: F401  (the fixtures)

pytestmark = [pytest.mark.browser]


def test_a_saved_config_of_one_setting_says_one_setting(page) -> None:  # noqa: F811 (the fixture)
    fill_field(page, "num_generations", "4")
    page.click("#saved-open")
    page.fill("#saved-name", "mine")
    page.keyboard.press("Enter")
    page.wait_for_selector("#saved-list li[data-name='mine']")
    listed = page.inner_text("#saved-list li[data-name='mine']")
    assert "1 setting," in listed and "1 settings" not in listed
    page.click("#saved-list li[data-name='mine'] button.load")
    page.wait_for_selector("#ask-dialog[open]")
    page.click("#ask-dialog-confirm")
    page.wait_for_function("() => /Opened mine/.test(document.getElementById('notice').textContent)")
    assert "(1 setting)" in page.inner_text("#notice")

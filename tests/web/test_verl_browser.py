"""A verl launch script in the form, in headless Chromium against a live service: Import reads it with verl's
engine (the verl card: its diagnostics, the schedule in verl's names with TRL's), puts the TRL equivalent in the
form, and Export writes either dialect."""

from __future__ import annotations

import pytest

from tests.support.browser import sync_api_or_skip
from tests.support.form_page import import_text, open_form, page, server, state  # noqa: F401  (page and server: the fixtures)
from tests.support.verl_runs import RUN

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # the module's live service starts in ~5 s
sync_api_or_skip()


def test_verl_script_imported_explained_and_exported_in_both_dialects(page) -> None:  # noqa: F811 (the fixture)
    open_form(page)
    import_text(page, RUN)
    card = page.locator("#verl-card")
    assert card.is_visible()
    text = card.inner_text()
    assert "Converted to TRL" in text and "verl's checks find no problem" in text
    assert "data.train_batch_size" in text and "TRL generation_batch_size=512, num_generations=8" in text
    assert "lossy: loss_agg_mode token-mean -> loss_type dapo" in text
    values = state(page)
    assert values["num_generations"] == 8 and values["per_device_train_batch_size"] == 4
    page.click("#export-open")
    page.wait_for_function("() => document.getElementById('export-text').value.includes('num_generations: 8')")
    assert "# lossy: loss_agg_mode token-mean -> loss_type dapo" in page.input_value("#export-text")
    page.select_option("#export-dialect", "verl")  # no reward_funcs or dataset yet: refused, and why
    page.wait_for_function("() => document.getElementById('export-notes').textContent.includes('No verl script')")
    assert "GRPO-R004" in page.inner_text("#export-notes") and page.input_value("#export-text") == ""


def test_the_export_dialog_names_the_dialect_it_writes(page) -> None:  # noqa: F811 (the fixture)
    import_text(page, RUN)
    page.click("#export-open")
    page.wait_for_function("() => document.getElementById('export-text').value.includes('num_generations: 8')")
    assert "TRL" in page.inner_text("#export-title") and "verl" not in page.inner_text("#export-title")
    assert page.get_attribute("#export-dialog", "aria-labelledby") == "export-title"
    page.select_option("#export-dialect", "verl")
    page.wait_for_function("() => /verl/.test(document.getElementById('export-title').textContent)")
    assert "TRL" not in page.inner_text("#export-title")
    assert "trl grpo" not in page.inner_text("label[for=export-text]")  # the text box says what it holds too
    page.select_option("#export-dialect", "trl")
    page.wait_for_function("() => /TRL/.test(document.getElementById('export-title').textContent)")


def test_undo_after_importing_a_verl_file_keeps_the_verl_card(page) -> None:  # noqa: F811 (the fixture)
    import_text(page, "learning_rate: 3.0e-06\n")
    import_text(page, RUN)
    assert page.locator("#verl-card").is_visible()
    page.click("#undo-import")
    page.wait_for_function("() => /Back to your config/.test(document.getElementById('notice').textContent)")
    page.wait_for_timeout(300)
    assert page.locator("#verl-card").is_visible()  # the verl file's diagnostics and schedule are still its answer
    assert "data.train_batch_size" in page.inner_text("#verl-card")
    assert state(page).get("learning_rate") == 3.0e-06 and "num_generations" not in state(page)
    assert "not in the form" in page.inner_text("#verl-verdict").lower()  # and it says the form no longer holds it

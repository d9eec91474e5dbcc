"""What a first-time user met in the form, in headless Chromium against a live service, each fixed and kept fixed:
counts that agree with their noun; the sharding select saying how the config shards, whichever keys say it; a
recipe's own world size taking the toolbar over, as an import's does; a saved config opening at the release and
hardware it was saved with; a typed number that cannot be used said beside it, never silently dropped; the focus
kept after an Undo by keyboard."""

from __future__ import annotations

import pytest

from tests.support.form_page import (  # noqa: F401  (page, server: the fixtures)
    fill_field,
    import_text,
    page,
    server,
    state,
    validations,
    wait_status,
    wait_validated,
)

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


def test_the_sharding_select_reads_a_recipe_that_shards_with_accelerate_launch_keys(page) -> None:  # noqa: F811
    page.select_option("#preset", "multinode-zero3")  # accelerate_config: zero3, no deepspeed field
    page.wait_for_function("() => window.grpoState().accelerate_config === 'zero3'")
    assert page.input_value("#sharding") == "zero3"  # was "none (DDP: a full copy per process)"
    page.select_option("#sharding", "zero2")  # a choice replaces the launch key: one place says how it shards
    page.wait_for_function("() => window.grpoState().deepspeed?.zero_optimization?.stage === 2")
    assert "accelerate_config" not in state(page)
    import_text(page, "model_name_or_path: m\nuse_fsdp: true\n")
    assert page.input_value("#sharding") == "fsdp"
    import_text(page, "model_name_or_path: m\naccelerate_config: my-accelerate.yaml\n")
    assert page.input_value("#sharding") == "custom"
    import_text(page, "model_name_or_path: m\naccelerate_config: multi_gpu\n")
    assert page.input_value("#sharding") == "none"


def test_a_recipe_that_declares_its_world_size_takes_the_toolbar_over_as_an_import_does(page) -> None:  # noqa: F811
    before = validations(page)
    page.fill("#world-size", "2")
    wait_validated(page, before)
    page.select_option("#preset", "multinode-zero3")  # num_processes: 16
    wait_status(page, "at world size 16")  # was judged at the 2 typed before, for a recipe of 2 nodes x 8 GPUs
    assert page.input_value("#world-size") == ""
    assert "world size (16) replaces the 2 typed" in page.inner_text("#notice")
    page.click("#undo-preset")
    wait_status(page, "at world size 2")
    assert page.input_value("#world-size") == "2"


def test_the_form_and_its_dialogs_keep_a_phones_width(page) -> None:  # noqa: F811 (the fixture)
    page.set_viewport_size({"width": 390, "height": 844})
    page.select_option("#preset", "demo")
    page.wait_for_function("() => /Started from Demo/.test(document.getElementById('notice').textContent)")
    widths = {"the form": page.evaluate("document.documentElement.scrollWidth")}
    for dialog in ("launch", "export", "import"):
        page.click(f"#{dialog}-open")
        page.wait_for_selector(f"#{dialog}-dialog[open]")
        widths[dialog] = page.evaluate("document.documentElement.scrollWidth")
        page.keyboard.press("Escape")
    assert all(width <= 390 for width in widths.values()), widths  # the release picker's text made it 448
    box = page.locator("#trl-version").bounding_box()
    assert box["x"] + box["width"] <= 390


def test_exporting_an_invalid_config_says_it_is_not_valid(page) -> None:  # noqa: F811 (the fixture)
    fill_field(page, "num_generations", "7")  # 8 x 1 x 1 = 8 is not a multiple of 7: B001
    page.click("#export-open")
    page.wait_for_function("() => document.getElementById('export-text').value.includes('num_generations: 7')")
    assert "NOT valid: 1 error at world size 1" in page.inner_text("#export-notes")
    page.click("#export-close")
    fill_field(page, "num_generations", "8")
    page.click("#export-open")
    page.wait_for_function("() => document.getElementById('export-text').value.includes('num_generations: 8')")
    assert page.locator("#export-invalid").count() == 0


def test_a_saved_config_opens_at_the_release_and_hardware_it_was_saved_with(page) -> None:  # noqa: F811
    before = validations(page)
    page.select_option("#trl-version", "0.19.1")
    wait_validated(page, before)
    fill_field(page, "num_generations", "4")
    page.fill("#hardware", "1xA100-80GB")
    page.press("#hardware", "Enter")
    page.click("#saved-open")
    page.fill("#saved-name", "old-release")
    page.keyboard.press("Enter")
    page.wait_for_selector("#saved-list li[data-name='old-release']")
    page.keyboard.press("Escape")
    before = validations(page)
    page.select_option("#trl-version", "")  # the service's release, and other hardware
    wait_validated(page, before)
    page.fill("#hardware", "8xH100-80GB")
    page.press("#hardware", "Enter")
    page.click("#saved-open")
    page.click("#saved-list li[data-name='old-release'] button.load")
    page.click("#ask-dialog-confirm")
    page.wait_for_function("() => /Opened old-release/.test(document.getElementById('notice').textContent)")
    page.wait_for_function("() => /TRL 0\\.19\\.1/.test(document.getElementById('judged-release').textContent)")
    assert page.input_value("#trl-version") == "0.19.1"  # was left at the service's release: another verdict
    assert page.input_value("#hardware") == "1xA100-80GB"
    page.click("#undo-open")
    page.wait_for_function("() => document.getElementById('trl-version').value === ''")
    assert page.input_value("#hardware") == "8xH100-80GB"


def test_a_world_size_or_dataset_size_that_cannot_be_used_is_said_beside_it(page) -> None:  # noqa: F811
    for typed in ("0", "-1", "1.5", "5000"):
        before = validations(page)
        page.fill("#world-size", typed)
        wait_validated(page, before)
        error = page.locator("#world-size-error")
        assert error.is_visible() and f'"{typed}" is not a whole number from 1 to 4096' in error.inner_text()
        assert "world size 1" in page.inner_text("#status")  # judged without it, and the line above says why
    before = validations(page)
    page.fill("#world-size", "4")
    wait_validated(page, before)
    assert page.locator("#world-size-error").is_hidden() and "world size 4" in page.inner_text("#status")
    before = validations(page)
    page.fill("#dataset-size", "-5")
    wait_validated(page, before)
    assert '"-5" is not a whole number of 1 or more' in page.inner_text("#dataset-size-error")


def test_undo_by_keyboard_keeps_the_focus_on_the_notice(page) -> None:  # noqa: F811 (the fixture)
    import_text(page, "learning_rate: 3.0e-06\n")
    page.focus("#undo-import")
    page.keyboard.press("Enter")
    page.wait_for_function("() => /Back to your config/.test(document.getElementById('notice').textContent)")
    assert page.evaluate("document.activeElement.id") == "notice"  # was the page's body: Tab started over
    page.select_option("#preset", "demo")
    page.wait_for_selector("#undo-preset")
    page.focus("#undo-preset")
    page.keyboard.press("Enter")
    page.wait_for_function("() => /Back to your config/.test(document.getElementById('notice').textContent)")
    assert page.evaluate("document.activeElement.id") == "notice"

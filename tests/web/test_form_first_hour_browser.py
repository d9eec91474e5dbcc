"""Small defects a new user meets in the form's first hour, each reproduced in headless Chromium (Debian's
/usr/bin/chromium through Playwright; never `playwright install`) against a real uvicorn with runs on: the memory
panel's reason for no estimate, the open-r1 offer once the profile is in use (and its keys at another release),
the header's TRL release, and what the form says offline. One test per defect; each failed on the form as it was.
"""

from __future__ import annotations

import pytest

from tests.support.browser import sync_api_or_skip
from tests.support.form_page import (  # noqa: F401  (page and server: the fixtures)
    OPEN_R1_TEXT,
    TOKEN,
    import_text,
    page,
    server,
    shots,
    validations,
    wait_status,
    wait_validated,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()


def test_no_estimate_names_the_unknown_model_not_the_hardware_section_warning(page):
    # the config's own hardware: section brings GRPO-H006 (a warning) before GRPO-H005 (the model is unknown)
    import_text(page, "model_name_or_path: my-org/my-unknown-model\nhardware: 1xH100-80GB\n")
    # the panel updates after the verdict: until then it still says what it said of the empty form
    page.wait_for_function(
        "() => /^No estimate/.test(document.getElementById('memory-summary').textContent)"
        " && document.getElementById('memory-summary').textContent.includes('my-unknown-model')",
        timeout=15_000,
    )
    summary = page.text_content("#memory-summary")
    assert "unknown model 'my-org/my-unknown-model'" in summary, summary
    assert "read by grpo-config only" not in summary, summary
    assert "--model-config" in summary  # what to do about it
    page.wait_for_function("() => !/checking memory/.test(document.getElementById('status').textContent)")
    assert "no memory estimate" in page.text_content("#status")  # the banner says there is none, too


def test_the_open_r1_offer_goes_once_the_profile_is_in_use_and_its_keys_leave_other_at_any_release(page):
    before = validations(page)
    page.select_option("#trl-version", "0.19.1")
    wait_validated(page, before)
    import_text(page, OPEN_R1_TEXT)
    assert page.locator("#use-profile-open-r1").is_visible()
    assert "system_prompt" in page.inner_text("[data-group='other-keys']")
    before = validations(page)
    page.locator("#diag-list button.fix.profile[data-profile='open-r1']").first.click()  # not the offer itself
    wait_validated(page, before)
    page.wait_for_function("() => document.getElementById('profile').value === 'open-r1'")
    assert page.locator("#use-profile-open-r1").count() == 0  # the offer is done with
    assert "Imported a file with 12 settings" in page.inner_text("#notice")  # what else it said stays, with Undo
    assert page.locator("#undo-import").is_visible()
    assert page.locator("[data-group='other-keys']").is_hidden()
    section = page.locator("details[data-group='profile-open-r1']")
    section.locator("summary").click()  # the section's rows are built as it opens
    for key in ("system_prompt", "dataset_prompt_column"):
        section.locator(f"#field-{key}").wait_for(timeout=5_000)
    assert page.input_value("#in-system_prompt") == "You are a helpful assistant."
    shots(page, "first-hour-open-r1-at-0.19")


def test_the_header_names_the_release_the_form_is_judged_for(page):
    wait_status(page, "^Valid")
    assert page.inner_text("header h1 .sub").startswith("TRL 1.16.0 ")  # the service's default
    before = validations(page)
    page.select_option("#trl-version", "0.19.1")
    wait_validated(page, before)
    header = page.inner_text("header h1 .sub")
    assert header.startswith("TRL 0.19.1 ") and "1.16" not in header, header
    assert "release picker" in page.get_attribute("#judged-release", "title")
    # a file's # grpo: --trl-version comment is the release too
    import_text(page, "# grpo: --trl-version 0.21.0\nnum_generations: 8\n")
    page.wait_for_function("() => document.querySelector('header h1 .sub').textContent.startsWith('TRL 0.21.0 ')")


def test_offline_every_derived_panel_is_marked_stale_and_launch_says_the_service_is_unreachable(page, server):
    import_text(
        page,
        "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/DeepMath-103K\n"
        "reward_funcs: [accuracy_reward]\nper_device_train_batch_size: 8\nnum_generations: 8\n",
    )
    wait_status(page, "^Valid")
    page.wait_for_selector("#memory-bar .memory-part")
    stale = "(id) => document.getElementById(id).dataset.stale === 'true'"
    assert not page.evaluate(f"({stale})('derived')")
    page.expect_offline = True  # failed requests are logged by the browser while the server is away
    server.stop()
    try:
        page.fill("#search", "num_generations")
        page.fill("#in-num_generations", "4")
        page.fill("#search", "")
        page.wait_for_selector("body[data-offline=true]", timeout=15_000)
        for panel in ("derived", "timeline", "derived-notes", "memory-panel"):
            assert page.evaluate(f"({stale})('{panel}')"), panel
        for note in ("#derived-stale", "#memory-stale"):
            assert page.locator(note).is_visible() and "stale" in page.inner_text(note).lower(), note
        shots(page, "first-hour-offline-stale")
        page.click("#launch-open")
        page.fill("#launch-token", TOKEN)
        page.click("#launch-apply")
        page.wait_for_function("() => document.getElementById('launch-error').textContent.length > 0")
        said = page.inner_text("#launch-error")
        assert "Failed to fetch" not in said and "cannot be reached" in said and "grpo serve" in said, said
        page.click("#launch-cancel")
    finally:
        server.start()
    page.wait_for_function("() => !document.body.dataset.offline", timeout=20_000)
    page.expect_offline = False
    for panel in ("derived", "timeline", "derived-notes", "memory-panel"):
        page.wait_for_function(f"() => !({stale})('{panel}')")
    assert page.locator("#derived-stale").is_hidden() and page.locator("#memory-stale").is_hidden()

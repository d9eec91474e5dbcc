"""Small defects a new user meets in the first hour with the form (issue 42, items 12-25), each reproduced in
headless Chromium (Debian's /usr/bin/chromium driven by Playwright; never `playwright install`) against a real
uvicorn with runs on, as a user drives the form. One test per defect; each failed on the form as it was before
its fix.
"""

from __future__ import annotations

import re

import pytest

from tests.web.chromium import sync_api_or_skip
from tests.web.test_form_flow import (  # noqa: F401  (browser is this module's fixture too)
    browser, fill_field, import_text, offline_runs_server, open_form, ready, state, validations, wait_status,
    wait_validated,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()

# Valid at any world size and launchable by the service (a run of it fails at once: no such model offline).
LAUNCHABLE = """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
per_device_train_batch_size: 8
num_generations: 8
"""
MAX_PROCESSES = 2


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with offline_runs_server(tmp_path_factory.mktemp("first-hour-runs"), runs_max_processes=MAX_PROCESSES) as live:
        yield live


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1366, "height": 800})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error"
            and "status of 4" not in msg.text else None)
    page.server = server
    page.goto(server.url + "/")
    ready(page)
    page.evaluate("localStorage.clear()")
    open_form(page)
    yield page
    context.close()
    assert problems == [], problems


def diag_buttons(page, where: str, code: str) -> list[str]:
    return page.locator(f"{where} .diag[data-code='{code}'] button.fix").all_inner_texts()


# --- refusals with one-click fixes -------------------------------------------------------------------------------
def test_a_profile_refused_for_runs_has_a_button_that_drops_the_profile(page):
    import_text(page, LAUNCHABLE)
    before = validations(page)
    page.select_option("#profile", "open-r1")
    wait_validated(page, before)
    page.wait_for_selector("#diag-list .diag[data-code='GRPO-X005']")
    buttons = page.locator("#diag-list .diag[data-code='GRPO-X005'] button.fix")
    assert buttons.all_inner_texts() == ["Use no profile"]
    buttons.first.click()
    page.wait_for_function("() => document.getElementById('profile').value === ''")
    page.wait_for_function("() => !document.querySelector(\"#diag-list .diag[data-code='GRPO-X005']\")")
    wait_status(page, "^Valid at world size 1: 0 errors")


def test_more_processes_than_the_service_allows_has_a_world_size_button_and_a_fix(page):
    import_text(page, LAUNCHABLE)
    page.fill("#world-size", "8")
    wait_status(page, "Launch would be refused")
    assert diag_buttons(page, "#diag-list", "GRPO-X006") == [f"Use world size {MAX_PROCESSES}"]
    page.locator("#diag-list .diag[data-code='GRPO-X006'] button.fix").first.click()
    wait_status(page, f"^Valid at world size {MAX_PROCESSES}: 0 errors")
    assert "Launch would be refused" not in page.inner_text("#status")

    import_text(page, LAUNCHABLE + "num_processes: 8\n")  # the file's own world size: the fix edits it
    wait_status(page, "Launch would be refused")
    assert diag_buttons(page, "#diag-list", "GRPO-X006") == [f"Fix: set num_processes: {MAX_PROCESSES}"]
    page.locator("#diag-list .diag[data-code='GRPO-X006'] button.fix").first.click()
    wait_status(page, f"^Valid at world size {MAX_PROCESSES}: 0 errors")
    assert state(page)["num_processes"] == MAX_PROCESSES


def test_more_processes_than_gpus_in_the_memory_panel_has_a_world_size_button(page):
    import_text(page, LAUNCHABLE)
    page.fill("#hardware", "1xH100-80GB")
    page.fill("#world-size", "2")
    page.wait_for_selector("#memory-diagnostics .diag[data-code='GRPO-H007']", timeout=15_000)
    assert diag_buttons(page, "#memory-diagnostics", "GRPO-H007") == ["Use world size 1"]
    page.locator("#memory-diagnostics .diag[data-code='GRPO-H007'] button.fix").first.click()
    page.wait_for_function("() => document.getElementById('world-size').value === '1'")
    page.wait_for_function("() => !document.querySelector(\"#memory-diagnostics .diag[data-code='GRPO-H007']\")",
                           timeout=15_000)


def test_every_memory_alternative_is_a_button(page):
    import_text(page, "model_name_or_path: Qwen/Qwen2.5-3B-Instruct\ndataset_name: trl-lib/DeepMath-103K\n"
                      "reward_funcs: [accuracy_reward]\nper_device_train_batch_size: 32\nnum_generations: 8\n"
                      "max_completion_length: 4096\nbf16: true\n")
    page.fill("#hardware", "1xH100-80GB")
    page.wait_for_function("() => /on 1xH100-80GB/.test(document.getElementById('memory-summary').textContent)",
                           timeout=15_000)
    page.wait_for_selector("#memory-diagnostics .diag[data-code='GRPO-H001']")
    plan = page.evaluate("""async () => (await (await fetch('/api/v1/plan?hardware=1xH100-80GB', {method: 'POST',
        headers: {'Content-Type': 'application/json'}, body: JSON.stringify(window.grpoState())})).json())""")
    h001 = next(d for d in plan["diagnostics"] if d["code"] == "GRPO-H001")
    titles = [f["title"] for f in [h001["fix"], *h001.get("alternatives", [])]]
    assert len(titles) >= 2  # the case this test is about
    assert diag_buttons(page, "#memory-diagnostics", "GRPO-H001") == [f"Fix: {t}" for t in titles]
    page.locator("#memory-diagnostics .diag[data-code='GRPO-H001'] button.fix").nth(1).click()
    alternative = h001["alternatives"][0]["set"]
    page.wait_for_function("(want) => Object.entries(want).every(([k, v]) => window.grpoState()[k] === v)",
                           arg=alternative)

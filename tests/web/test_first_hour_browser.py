"""Small defects a new user meets in the first hour with the form (issue 42, items 12-25), each reproduced in
headless Chromium (Debian's /usr/bin/chromium driven by Playwright; never `playwright install`) against a real
uvicorn with runs on, as a user drives the form. One test per defect; each failed on the form as it was before
its fix.
"""

from __future__ import annotations

import re

import pytest

from tests.support.browser import sync_api_or_skip
from tests.support.configs import LAUNCHABLE
from tests.support.form_page import (
    fill_field,
    import_text,
    offline_runs_server,
    open_form,
    ready,
    state,
    validations,
    wait_status,
    wait_validated,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()

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
    page.on(
        "console",
        lambda msg: problems.append(msg.text) if msg.type == "error" and "status of 4" not in msg.text else None,
    )
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
    page.wait_for_function(
        "() => !document.querySelector(\"#memory-diagnostics .diag[data-code='GRPO-H007']\")", timeout=15_000
    )


def test_every_memory_alternative_is_a_button(page):
    import_text(
        page,
        "model_name_or_path: Qwen/Qwen2.5-3B-Instruct\ndataset_name: trl-lib/DeepMath-103K\n"
        "reward_funcs: [accuracy_reward]\nper_device_train_batch_size: 32\nnum_generations: 8\n"
        "max_completion_length: 4096\nbf16: true\n",
    )
    page.fill("#hardware", "1xH100-80GB")
    page.wait_for_function(
        "() => /on 1xH100-80GB/.test(document.getElementById('memory-summary').textContent)", timeout=15_000
    )
    page.wait_for_selector("#memory-diagnostics .diag[data-code='GRPO-H001']")
    plan = page.evaluate("""async () => (await (await fetch('/api/v1/plan?hardware=1xH100-80GB', {method: 'POST',
        headers: {'Content-Type': 'application/json'}, body: JSON.stringify(window.grpoState())})).json())""")
    h001 = next(d for d in plan["diagnostics"] if d["code"] == "GRPO-H001")
    titles = [f["title"] for f in [h001["fix"], *h001.get("alternatives", [])]]
    assert len(titles) >= 2  # the case this test is about
    assert diag_buttons(page, "#memory-diagnostics", "GRPO-H001") == [f"Fix: {t}" for t in titles]
    page.locator("#memory-diagnostics .diag[data-code='GRPO-H001'] button.fix").nth(1).click()
    alternative = h001["alternatives"][0]["set"]
    page.wait_for_function(
        "(want) => Object.entries(want).every(([k, v]) => window.grpoState()[k] === v)", arg=alternative
    )


# --- values as they were written, help as it was written -----------------------------------------------------------
def test_a_small_learning_rate_comes_back_as_it_was_written_and_defaults_read_the_same_way(page):
    fill_field(page, "learning_rate", "3e-6")
    page.reload()
    ready(page)
    page.fill("#search", "learning_rate")
    assert page.input_value("#in-learning_rate") == "3e-6"  # not 0.000003
    assert state(page)["learning_rate"] == 3e-6
    assert "(default: 1e-6)" in page.inner_text("#help-learning_rate")


def test_field_help_is_shown_whole_on_a_phone(page):
    page.set_viewport_size({"width": 390, "height": 844})
    page.fill("#search", "generation_batch_size")
    help_text = page.locator("#help-generation_batch_size")
    help_text.wait_for()
    page.mouse.move(0, 0)  # no hover, no focus: as a phone shows it
    assert len(help_text.inner_text()) > 200  # a description of several lines at this width
    assert page.evaluate("(n) => n.scrollHeight <= n.clientHeight + 1", help_text.element_handle())
    assert help_text.inner_text().rstrip().endswith("(default: none)")  # its end, the default, is on the page


# --- a config's own hardware -------------------------------------------------------------------------------------
def test_a_recipe_with_its_own_hardware_takes_the_memory_panel_from_the_typed_one_and_undo_gives_it_back(page):
    page.fill("#hardware", "1xH100-80GB")
    page.wait_for_function(
        "() => /1xH100-80GB \\(typed here\\)/.test(document.getElementById('memory-summary')"
        ".textContent) || /No estimate/.test(document.getElementById('memory-summary').textContent)",
        timeout=15_000,
    )
    page.select_option("#preset", "demo")  # examples/demo.yaml says `# grpo: --hardware 8GB`
    page.wait_for_selector("#undo-preset")
    assert page.input_value("#hardware") == ""
    said = page.inner_text("#hardware-taken")
    assert "8GB" in said and "replaces the 1xH100-80GB typed in the memory panel" in said, said
    page.click("#undo-preset")
    assert page.input_value("#hardware") == "1xH100-80GB" and state(page) == {}

    import_text(page, LAUNCHABLE + "hardware: 1xA100-80GB\n")  # an imported file's own hardware too
    assert page.input_value("#hardware") == "" and "1xA100-80GB" in page.inner_text("#hardware-taken")
    page.wait_for_function(
        "() => /on 1xA100-80GB \\(the config's hardware: section\\)/.test("
        "document.getElementById('memory-summary').textContent)",
        timeout=15_000,
    )
    page.click("#undo-import")
    assert page.input_value("#hardware") == "1xH100-80GB"


# --- saved configs -------------------------------------------------------------------------------------------------
def test_opening_a_saved_config_can_be_undone(page):
    import_text(page, LAUNCHABLE)
    page.click("#saved-open")
    page.fill("#saved-name", "mine")
    page.click("#saved-form button[type=submit]")
    page.wait_for_selector("#saved-list li[data-name='mine']")
    page.click("#saved-close")
    import_text(page, LAUNCHABLE.replace("num_generations: 8", "num_generations: 4") + "beta: 0.1\n")
    work = state(page)
    page.fill("#world-size", "2")
    page.click("#saved-open")
    page.click("#saved-list li[data-name='mine'] button.load")
    page.click("#ask-dialog-confirm")
    page.wait_for_selector("#undo-open")
    assert state(page)["num_generations"] == 8 and "beta" not in state(page)
    assert "Opened mine" in page.inner_text("#notice")
    page.click("#undo-open")  # the config from before, and its world size
    assert state(page) == work and page.input_value("#world-size") == "2"
    assert "Back to your config from before opening mine" in page.inner_text("#notice")


# --- counted words -------------------------------------------------------------------------------------------------
ONE_OF_MANY = re.compile(r"\b(1 (?![a-z-]*ss\b)[a-z-]+s|0 copies|1 times|each of the [01] )\b|\(s\)")


def test_the_schedule_says_one_prompt_once_never_1_prompts_1_times(page):
    import_text(page, LAUNCHABLE)  # 8 completions a step, 8 to a group: one prompt, generated once a step
    page.wait_for_selector("#derived-notes .notes li")
    notes = page.inner_text("#derived-notes")
    assert "each chunk of 1 prompt once" in notes and "the trainer generates from it" in notes, notes
    why = page.inner_text("#schedule-why")
    assert "everything the next micro-step trains on" in why and "no copy to ignore" in why, why
    value = "(key) => document.querySelector(`#derived .derived-item[data-key='${key}'] dd`).textContent"
    assert page.evaluate(f"({value})('generate_every_micro_steps')") == "1 micro-step"  # a number with its unit
    assert page.evaluate(f"({value})('world_size')") == "1 process"
    assert page.evaluate(f"({value})('completions_per_process_per_generation')") == "8 completions"
    for text in (notes, why, page.inner_text("#derived"), page.inner_text("#timeline")):
        assert not ONE_OF_MANY.search(text), ONE_OF_MANY.search(text).group(0)


def test_the_demo_recipe_gets_a_memory_estimate_on_its_own_hardware(page):
    page.select_option("#preset", "demo")
    page.wait_for_function(
        "() => /per GPU: fits/.test(document.getElementById('memory-summary').textContent)", timeout=15_000
    )
    summary = page.inner_text("#memory-summary")
    assert "of 8.0 GiB per GPU: fits" in summary and "on 8GB (the file's # grpo: comment)" in summary, summary
    # the recipe opens clean: no warning (its hardware is a `# grpo:` comment, which trl never reads)
    assert page.locator("#diag-list .diag.warning, #diag-list .diag.error").count() == 0
    assert re.search(r"0 errors, 0 warnings", page.text_content("#status")), page.text_content("#status")
    assert "No estimate" not in summary and "GRPO-H005" not in page.inner_text("#memory-panel")


def test_the_launch_dialog_writes_no_null_where_the_environment_has_no_problem(page):
    import_text(page, LAUNCHABLE)
    page.click("#launch-open")
    page.wait_for_selector("#launch-doctor[data-state=ok]", timeout=30_000)
    said = page.inner_text("#launch-doctor")
    assert "has what this config uses" in said and "null" not in said, said
    assert "null" not in page.inner_text("#launch-dialog")
    page.click("#launch-cancel")

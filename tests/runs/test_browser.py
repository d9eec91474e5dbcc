"""Launch from the web form and watch the run finish on the runs page, in the run's headless Chromium
(tests/support/browser.py). Screenshots go to test-artifacts/screenshots/runs-*.png for a person to look at."""

from __future__ import annotations

import pytest

from tests.support.browser import sync_api_or_skip
from tests.support.run_config import run_yaml
from tests.support.runs_page import import_config, page, press_launch, shot  # noqa: F401  (page: the fixture)
from tests.support.service import TOKEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api_or_skip()


def test_launch_from_the_form_and_watch_it_finish(page, make_service, assets):
    service = make_service()
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)

    # a config the service would refuse: the dialog shows why and keeps Launch off
    import_config(page, run_yaml(assets, trust_remote_code=True))
    page.click("#launch-open")
    page.wait_for_selector("#launch-diagnostics li")
    assert "GRPO-X003" in page.inner_text("#launch-diagnostics") and page.is_disabled("#launch-apply")
    shot(page, "launch-refused")
    page.click("#launch-cancel")

    import_config(page, run_yaml(assets, max_steps=20, save_steps=10))
    press_launch(page, "not-the-token")  # a wrong token says so
    page.wait_for_function("() => /refused the token/.test(document.getElementById('launch-error').textContent)")
    page.fill("#launch-token", TOKEN)
    page.click("#launch-apply")
    page.wait_for_url("**/runs#run=*", timeout=15_000)
    run_id = page.url.rsplit("=", 1)[1]
    assert page.locator("#token-form").is_hidden()  # the tab kept the token the dialog was given
    page.wait_for_selector("figure[data-metric=reward] polyline", timeout=120_000)
    shot(page, "running")
    page.wait_for_selector("#run-state[data-state=succeeded]", timeout=120_000)
    page.wait_for_function("() => /run succeeded/.test(document.getElementById('log').textContent)")
    shot(page, "succeeded")

    assert page.inner_text(f"tr[data-run-id='{run_id}'] .state") == "succeeded"
    assert "checkpoint-10, checkpoint-20" in page.inner_text("#run-facts")
    assert page.locator("#cancel").is_disabled()
    assert page.locator("#resume").is_disabled() and "no step left" in page.inner_text("#resume-why")  # all 20 done
    caption = page.inner_text("figure[data-metric=reward] figcaption")
    assert "(step 20)" in caption
    assert page.locator("figure[data-metric=kl]").count() == 0  # beta 0: no KL is logged
    assert service.run(run_id)["state"] == "succeeded"


def test_the_runs_page_takes_the_token_from_the_link_grpo_serve_prints(page, make_service):
    service = make_service()
    page.goto(service.url + "/runs")
    page.wait_for_selector("#token-form:not([hidden])")
    # without a token the page says one is needed; it never claims there are no runs
    assert "A token is needed" in page.inner_text("#token-needed") and page.locator("#runs-empty").is_hidden()
    page.fill("#token", "not-the-token")
    page.click("#token-form button[type=submit]")
    page.wait_for_function("() => /refused the token/.test(document.getElementById('message').textContent)")
    assert page.locator("#runs-empty").is_hidden()
    page.evaluate("sessionStorage.clear()")
    page.goto("about:blank")  # a new load, as when the link is opened
    page.goto(f"{service.url}/runs#token={TOKEN}")
    page.wait_for_selector("#token-form", state="hidden")
    page.wait_for_function("() => !location.hash.includes('token')")  # not left in the address bar or history
    assert "No runs yet" in page.inner_text("#runs-empty")


def shots(page, name: str) -> None:
    for width in (800, 1920):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(150)
        shot(page, f"{name}-{width}")
    page.set_viewport_size({"width": 1366, "height": 900})


def test_the_runs_page_works_from_the_keyboard_with_progress_eta_and_a_cancel_that_asks(page, make_service, assets):
    service = make_service()
    running = service.launch(run_yaml(assets, max_steps=2000, save_steps=5))["id"]
    service.wait_state(running, ("running",))
    queued = service.launch(run_yaml(assets, max_steps=4, output_dir="second"))["id"]  # one slot: it waits
    page.goto(f"{service.url}/runs#token={TOKEN}")
    page.wait_for_selector(f"tr[data-run-id='{queued}']")
    assert page.locator("#runs-empty").is_hidden()

    # keyboard only: Tab reaches the rows, arrows move between them, Enter opens one
    for _ in range(6):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.runId"):
            break
    assert page.evaluate("document.activeElement.dataset.runId") == queued  # newest first
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => location.hash === '#run={queued}'")
    page.wait_for_selector("#run-state[data-state=queued]")
    page.focus("#cancel")
    page.keyboard.press("Enter")
    page.wait_for_selector("#cancel-dialog[open]")
    assert "It has not started: nothing is lost." in page.inner_text("#cancel-dialog")
    assert page.evaluate("document.activeElement.id") == "cancel-dialog-cancel"  # the safe choice has the focus
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.id") == "cancel-dialog-confirm"
    page.keyboard.press("Enter")
    page.wait_for_selector("#run-state[data-state=cancelled]", timeout=30_000)
    page.focus(f"tr[data-run-id='{queued}']")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.runId") == running
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => location.hash === '#run={running}'")

    # progress bar and ETA while it trains, in the list and in the detail
    page.wait_for_function(
        "() => /of 2000 \\(\\d+%\\), about .* left/.test(document.getElementById('run-progress-text').textContent)",
        timeout=120_000,
    )
    assert page.locator(f"tr[data-run-id='{running}'] progress").count() == 1
    page.wait_for_function(
        "() => /checkpoint-5/.test(document.getElementById('run-facts').textContent)", timeout=120_000
    )
    page.wait_for_function(
        "() => { const t = document.getElementById('run-progress-text').textContent;"
        " const m = /step (\\d+)/.exec(t); return m && Number(m[1]) >= 7; }",
        timeout=120_000,
    )
    shots(page, "keyboard-progress")
    page.set_viewport_size({"width": 800, "height": 900})
    page.wait_for_timeout(150)
    assert (
        page.evaluate("""() => ['.runs-list', '.run-detail'].map(s => document.querySelector(s))
        .filter(n => n.scrollHeight > n.clientHeight + 2 && getComputedStyle(n).overflowY !== 'visible').length""")
        == 0
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    page.set_viewport_size({"width": 1366, "height": 900})

    # cancel asks first, saying what would be lost; keeping it running changes nothing
    page.focus("#cancel")
    page.keyboard.press("Enter")
    page.wait_for_selector("#cancel-dialog[open]")
    question = page.inner_text("#cancel-dialog")
    assert "since the last checkpoint (step" in question and "will be lost" in question
    shots(page, "cancel-asks")
    page.keyboard.press("Escape")
    page.wait_for_selector("#cancel-dialog", state="detached")
    assert service.run(running)["state"] == "running"
    page.focus("#cancel")
    page.keyboard.press("Enter")
    page.click("#cancel-dialog-confirm")
    page.wait_for_selector("#run-state[data-state=cancelled]", timeout=60_000)
    assert service.run(running)["state"] == "cancelled"

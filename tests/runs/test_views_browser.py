"""The runs page's completions and compare views in headless Chromium (Debian's /usr/bin/chromium): a demo run
with log_completions shows its completions with each reward function's score while it runs and after a reload;
two runs overlaid with their config difference; a hostile completion (HTML, a script, 5 MB) shown as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runs.conftest import TOKEN, run_yaml
from tests.runs.test_browser import page, shot  # noqa: F401  (the page fixture: Chromium, no page errors)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def open_run(page, service, run_id: str) -> None:
    page.goto(f"{service.url}/runs#token={TOKEN}&run={run_id}")
    page.wait_for_selector("body[data-ready=true]")


def test_completions_while_running_and_after_reload(page, make_service, assets):
    service = make_service()
    # long enough to be seen running on a busy machine too (the page polls, the browser starts first)
    run = service.launch(run_yaml(assets, max_steps=80, save_steps=80, log_completions=True))
    open_run(page, service, run["id"])
    page.wait_for_selector("#completions-list .completion [data-function=target_word_reward]", timeout=120_000)
    assert service.run(run["id"])["state"] == "running"  # seen while it runs
    first = page.locator("#completions-step").input_value()
    page.wait_for_function(f"() => Number(document.getElementById('completions-step').value) > {first}",
                           timeout=60_000)  # it follows new steps
    assert page.locator("#completions-list .group").count() >= 1
    shot(page, "completions-running")
    service.wait_state(run["id"], ("succeeded",), timeout=600)
    page.reload()
    page.wait_for_selector("#completions-list .completion [data-function=target_word_reward]", timeout=30_000)
    text = page.inner_text("#completions-list")
    assert "reward" in text and "advantage" in text and "length" in text
    # keyboard: pick an earlier step; filters
    page.focus("#completions-step")
    page.keyboard.press("Home")
    page.wait_for_function("() => document.getElementById('completions-step').value === '0'")
    assert not page.locator("#completions-follow").is_checked()
    page.check("#completions-truncated")
    page.wait_for_timeout(300)
    assert page.locator(".completion[data-truncated=false]").count() == 0
    page.uncheck("#completions-truncated")
    page.select_option("#completions-sort", "reward-desc")
    page.fill("#completions-search", "zzz-no-such-text")
    page.wait_for_function("() => document.querySelectorAll('#completions-list .completion').length === 0")


def test_two_runs_overlaid_and_hostile_completion_is_text(page, make_service, assets):
    service = make_service()
    first = service.launch(run_yaml(assets, max_steps=3, log_completions=True))
    second = service.launch(run_yaml(assets, max_steps=3, learning_rate=0.05))
    for run in (first, second):
        service.wait_state(run["id"], ("succeeded",))
    path = Path(service.run(first["id"])["output_dir"]) / "completions.jsonl"
    hostile = "<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>" + "A" * (5 << 20)
    with path.open("a") as handle:
        handle.write(json.dumps({"step": 9, "prompt": "<b>bold?</b>", "completion": hostile,
                                 "rewards": {"target_word_reward": 1.0}, "advantage": 0.0}) + "\n")

    open_run(page, service, first["id"])
    page.wait_for_selector("#completions-list .completion")
    page.wait_for_function("() => [...document.getElementById('completions-step').options].some(o => o.value === '9')")
    page.select_option("#completions-step", "9")
    page.wait_for_selector("#completions-list .show-all")
    shown = page.locator("#completions-list .completion-text").first
    assert shown.inner_text().startswith("<img src=x") and page.locator("#completions-list img, #completions-list script, #completions-list b").count() == 0
    assert len(shown.inner_text()) == 20_000
    page.focus("#completions-list .show-all")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#completions-list .completion-text').textContent.length > 5000000",
                           timeout=60_000)
    assert page.evaluate("() => window.pwned") is None
    shot(page, "completions-hostile")

    for run in (first, second):  # keyboard: tick both, then compare
        page.focus(f"tr[data-run-id='{run['id']}'] input.pick")
        page.keyboard.press("Space")
    page.focus("#compare-open")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#compare-charts figure[data-metric=reward] polyline[data-run-id='{second['id']}']")
    assert page.locator("#compare-charts figure[data-metric=reward] polyline").count() == 2
    rows = page.locator("#compare-diff tbody tr")
    keys = [rows.nth(i).get_attribute("data-key") for i in range(rows.count())]
    assert keys == ["learning_rate", "log_completions"]
    assert "0.05" in page.inner_text("#compare-diff tr[data-key=learning_rate]")
    shot(page, "compare")

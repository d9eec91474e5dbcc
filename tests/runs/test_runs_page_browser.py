"""The runs page as a new user meets it (issue 42), in headless Chromium (Debian's /usr/bin/chromium through
Playwright) against a real `grpo serve --enable-runs` and real runs of the tiny local model: the page on a phone's
width."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runs.conftest import TOKEN, run_yaml
from tests.runs.test_browser import page, shot  # noqa: F401  (page: the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def open_run(page, service, run_id: str) -> None:
    page.goto(f"{service.url}/runs#token={TOKEN}&run={run_id}")
    page.wait_for_selector("body[data-ready=true]")


# the elements wider than the page, as "tag#id.class (right edge)": what makes the page scroll sideways
WIDER_THAN_PAGE = """() => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll('body *')].filter((n) => {
    const box = n.getBoundingClientRect();
    return box.width > 0 && box.right > width + 1 && !n.closest('.sr-only');
  }).map((n) => `${n.tagName.toLowerCase()}${n.id ? '#' + n.id : ''}${n.className && typeof n.className === 'string'
    ? '.' + n.className.trim().split(/\\s+/).join('.') : ''} (${Math.round(n.getBoundingClientRect().right)})`);
}"""


def test_the_runs_page_fits_a_390_px_phone_without_scrolling_sideways(page, make_service, assets):
    service = make_service()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{service.url}/runs")  # without a token: the token form
    page.wait_for_selector("#token-form:not([hidden])")
    assert page.evaluate(WIDER_THAN_PAGE) == []
    page.goto("about:blank")
    run = service.launch(run_yaml(assets, max_steps=2, save_steps=1, log_completions=True,
                                  output_dir="a-rather-long-folder-name-for-the-outputs-of-this-run/output"))
    other = service.launch(run_yaml(assets, max_steps=2, learning_rate=0.05,
                                    dataset_name=str(assets.data) + "/../" + assets.data.name))
    for launched in (run, other):
        service.wait_state(launched["id"], ("succeeded",), timeout=240)
    path = Path(service.run(run["id"])["output_dir"]) / "completions.jsonl"
    with path.open("a") as handle:  # a completion with no spaces to break at, as a model may write
        handle.write(json.dumps({"step": 2, "prompt": "p", "completion": "x" * 400,
                                 "rewards": {"target_word_reward": 0.0}}) + "\n")
    open_run(page, service, run["id"])
    page.wait_for_selector("#completions-list .completion", timeout=30_000)
    page.wait_for_selector("#charts figure")
    page.evaluate("document.querySelector('#detail details').open = true")  # the config too
    page.wait_for_timeout(300)
    shot(page, "narrow-390")
    wider = page.evaluate(WIDER_THAN_PAGE)
    assert wider == [], "\n".join(wider)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    for launched in (run, other):  # the compare view, with its config differences
        page.check(f"tr[data-run-id='{launched['id']}'] input.pick")
    page.click("#compare-open")
    page.wait_for_selector("#compare-diff tr[data-key=dataset_name]")
    shot(page, "narrow-390-compare")
    wider = page.evaluate(WIDER_THAN_PAGE)
    assert wider == [], "\n".join(wider)

"""The runs page as a new user meets it (issue 42), in headless Chromium (Debian's /usr/bin/chromium through
Playwright) against a real `grpo serve --enable-runs` and real runs of the tiny local model: the page on a phone's
width; the completions view's sort, filters and counter over every row of a step, not the rows loaded; a run
whose output_dir another launch overwrote keeps its own completions, metrics file and health."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.completions_file import controlled_completions
from tests.support.run_config import run_yaml
from tests.support.runs_page import import_config, page, press_launch, shot, shown_indexes  # noqa: F401  (page)
from tests.support.service import TOKEN

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
    run = service.launch(
        run_yaml(
            assets,
            max_steps=2,
            save_steps=1,
            log_completions=True,
            output_dir="a-rather-long-folder-name-for-the-outputs-of-this-run/output",
        )
    )
    other = service.launch(
        run_yaml(assets, max_steps=2, learning_rate=0.05, dataset_name=str(assets.data) + "/../" + assets.data.name)
    )
    for launched in (run, other):
        service.wait_state(launched["id"], ("succeeded",), timeout=240)
    path = Path(service.run(run["id"])["output_dir"]) / "completions.jsonl"
    with path.open("a") as handle:  # a completion with no spaces to break at, as a model may write
        handle.write(
            json.dumps({"step": 2, "prompt": "p", "completion": "x" * 400, "rewards": {"target_word_reward": 0.0}})
            + "\n"
        )
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


def note(page) -> str:
    return page.inner_text("#completions-note")


def test_completions_sort_and_filter_act_on_every_row_of_the_step_and_the_counter_says_what_matches(
    page, make_service, assets
):
    service = make_service()
    run = service.launch(run_yaml(assets, max_steps=1, save_steps=1))
    service.wait_state(run["id"], ("succeeded",), timeout=240)
    # step 1: 450 rows in 45 groups of 10 (prompt i // 10), reward i / 450: the best rows are the last ones,
    # beyond the first 200 the page loads
    controlled_completions(Path(service.run(run["id"])["output_dir"]) / "completions.jsonl")
    open_run(page, service, run["id"])
    page.wait_for_function(
        "() => /200 of 450 completions of step 2/.test(document.getElementById('completions-note').textContent)",
        timeout=30_000,
    )

    page.select_option("#completions-sort", "reward-desc")  # the best group of the step first, best row first
    page.wait_for_function(
        "() => document.querySelector('#completions-list .completion').dataset.index === '457'", timeout=10_000
    )
    assert shown_indexes(page)[:11] == [457, 456, 455, 454, 453, 452, 451, 450, 449, 448, 447]
    assert page.inner_text("#completions-list .group .prompt-text") == "prompt 44"
    assert "200 of 450 completions of step 2" in note(page)
    page.select_option("#completions-sort", "order")

    page.fill("#completions-min", "0.9")  # a total reward of at least 0.9: rows 405 to 449, all beyond the first 200
    page.wait_for_function(
        "() => document.querySelectorAll('#completions-list .completion').length === 45", timeout=10_000
    )
    assert shown_indexes(page) == list(range(8 + 405, 8 + 450))
    assert "45 completions of step 2 match the filters (450 in the step)" in note(page), note(page)
    assert page.locator("#completions-more").is_hidden()

    page.fill("#completions-min", "")
    page.fill("#completions-search", "row 44")  # "row 44" and "row 440" to "row 449": 11 rows
    page.wait_for_function(
        "() => document.querySelectorAll('#completions-list .completion').length === 11", timeout=10_000
    )
    assert "11 completions of step 2 match the filters" in note(page), note(page)
    page.fill("#completions-search", "zzz-no-such-text")
    page.wait_for_function(
        "() => /No completion of step 2 matches the filters/.test("
        "document.getElementById('completions-note').textContent)",
        timeout=10_000,
    )
    assert page.locator("#completions-list .completion").count() == 0
    assert "450 in the step" in note(page)
    shot(page, "completions-none-match")
    page.fill("#completions-search", "")
    page.wait_for_function(
        "() => /^200 of 450 completions of step 2; 2 unreadable line/.test("
        "document.getElementById('completions-note').textContent)",
        timeout=10_000,
    )
    assert "match" not in note(page)


def completion_texts(service, run_id: str) -> list[str]:
    with service.client() as client:
        answer = client.get(f"/api/v1/runs/{run_id}/completions.jsonl")
    assert answer.status_code == 200, answer.text
    return [json.loads(line)["completion"] for line in answer.text.splitlines()]


def test_after_overwrite_the_replaced_run_keeps_its_own_completions(page, make_service, assets):
    service = make_service()
    text = run_yaml(assets, max_steps=2, save_steps=2, log_completions=True, output_dir="shared/output")
    first = service.launch(text)["id"]
    service.wait_state(first, ("succeeded",), timeout=240)
    output = Path(service.run(first)["output_dir"])
    with (output / "completions.jsonl").open("a") as handle:  # a row only the first run has
        handle.write(
            json.dumps(
                {
                    "step": 7,
                    "prompt": "the first run's",
                    "completion": "first run's own row",
                    "rewards": {"target_word_reward": 1.0},
                }
            )
            + "\n"
        )
    own = completion_texts(service, first)

    # the same output_dir from the form: Overwrite, after a question that says what goes and what stays
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    import_config(page, text.replace("max_steps: 2", "max_steps: 3"))
    press_launch(page, TOKEN)
    page.wait_for_selector("#launch-choices #launch-overwrite", timeout=30_000)
    page.click("#launch-overwrite")
    page.wait_for_selector("#overwrite-dialog[open]")
    question = page.inner_text("#overwrite-dialog")
    assert "checkpoints and model" in question and "completions" in question.split("deleted")[-1], question
    page.click("#overwrite-dialog-confirm")
    page.wait_for_url("**/runs#run=*", timeout=30_000)
    second = page.url.rsplit("=", 1)[1]
    assert second != first
    service.wait_state(second, ("succeeded",), timeout=240)
    assert "first run's own row" not in completion_texts(service, second)

    # the replaced run: its own completions in the view and the download, its page says what was deleted
    assert completion_texts(service, first) == own
    page.goto("about:blank")
    open_run(page, service, first)
    page.wait_for_function(
        "() => [...document.getElementById('completions-step').options].some(o => o.value === '7')", timeout=30_000
    )
    page.select_option("#completions-step", "7")
    page.wait_for_selector("#completions-list .completion-text")
    assert page.inner_text("#completions-list .completion-text") == "first run's own row"
    replaced = page.text_content("#run-facts [data-fact='replaced by'] dd")
    assert second in replaced and "checkpoints and model" in replaced and "completions" in replaced, replaced
    with service.client() as client:  # its health is of its own records, not of the second run's 3 steps
        health = {run_id: client.get(f"/api/v1/runs/{run_id}/health").json() for run_id in (first, second)}
    assert health[second]["steps"] == 3 and health[first]["steps"] != 3, health
    shot(page, "overwritten-keeps-completions")

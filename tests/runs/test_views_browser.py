"""The runs page's completions and compare views in headless Chromium (Debian's /usr/bin/chromium): a demo run
with log_completions shows its completions with each reward function's score while it runs and after a reload;
two runs overlaid with their config difference; a hostile completion (HTML, a script, 5 MB) shown as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.completions_file import STEP0, STEP1_ROWS, controlled_completions
from tests.support.run_config import run_yaml
from tests.support.runs_page import page, shot, shown_indexes  # noqa: F401  (page: the fixture)
from tests.support.service import TOKEN

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
    page.wait_for_function(
        f"() => Number(document.getElementById('completions-step').value) > {first}", timeout=60_000
    )  # it follows new steps
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
    # both with a KL penalty (beta > 0), so both have a KL curve
    first = service.launch(run_yaml(assets, max_steps=3, log_completions=True, beta=0.04))
    second = service.launch(run_yaml(assets, max_steps=3, learning_rate=0.05, beta=0.1))
    for run in (first, second):
        service.wait_state(run["id"], ("succeeded",))
    path = Path(service.run(first["id"])["output_dir"]) / "completions.jsonl"
    hostile = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>' + "A" * (5 << 20)
    with path.open("a") as handle:
        handle.write(
            json.dumps(
                {
                    "step": 9,
                    "prompt": "<b>bold?</b>",
                    "completion": hostile,
                    "rewards": {"target_word_reward": 1.0},
                    "advantage": 0.0,
                }
            )
            + "\n"
        )

    open_run(page, service, first["id"])
    page.wait_for_selector("#completions-list .completion")
    page.wait_for_function("() => [...document.getElementById('completions-step').options].some(o => o.value === '9')")
    page.select_option("#completions-step", "9")
    page.wait_for_selector("#completions-list .show-all")
    shown = page.locator("#completions-list .completion-text").first
    assert (
        shown.inner_text().startswith("<img src=x")
        and page.locator("#completions-list img, #completions-list script, #completions-list b").count() == 0
    )
    assert len(shown.inner_text()) == 20_000
    page.focus("#completions-list .show-all")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#completions-list .completion-text').textContent.length > 5000000",
        timeout=60_000,
    )
    assert page.evaluate("() => window.pwned") is None
    shot(page, "completions-hostile", full_page=False)

    for run in (first, second):  # keyboard: tick both, then compare
        page.focus(f"tr[data-run-id='{run['id']}'] input.pick")
        page.keyboard.press("Space")
    page.focus("#compare-open")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#compare-charts figure[data-metric=reward] polyline[data-run-id='{second['id']}']")
    for metric in ("reward", "kl"):  # one line per run on the reward and on the KL chart
        lines = page.locator(f"#compare-charts figure[data-metric={metric}] polyline")
        assert sorted(lines.nth(i).get_attribute("data-run-id") for i in range(lines.count())) == sorted(
            [first["id"], second["id"]]
        ), metric
        assert all(len(lines.nth(i).get_attribute("points").split()) == 3 for i in range(2)), metric  # 3 steps
    rows = page.locator("#compare-diff tbody tr")
    keys = [rows.nth(i).get_attribute("data-key") for i in range(rows.count())]
    assert keys == ["beta", "learning_rate", "log_completions"]
    assert "0.05" in page.inner_text("#compare-diff tr[data-key=learning_rate]")
    cells = page.locator("#compare-diff tr[data-key=beta] td")
    assert [cells.nth(i).inner_text() for i in range(2)] == ["0.04", "0.1"]
    shot(page, "compare", full_page=False)


def test_marks_sort_filters_paging_skipped_lines_and_downloads(page, make_service, assets, tmp_path):
    service = make_service()
    run = service.launch(run_yaml(assets, max_steps=1, save_steps=1))
    service.wait_state(run["id"], ("succeeded",))
    controlled_completions(Path(service.run(run["id"])["output_dir"]) / "completions.jsonl")
    open_run(page, service, run["id"])

    # following the newest step: step 1, 200 of its 450 rows, then the rest with "Load more"
    page.wait_for_function(
        "() => /200 of 450 completions of step 2/.test(document.getElementById('completions-note').textContent)",
        timeout=30_000,
    )
    assert "2 unreadable lines skipped" in page.inner_text("#completions-note")
    assert shown_indexes(page) == list(range(8, 208))
    page.click("#completions-more")
    page.wait_for_function("() => document.querySelectorAll('#completions-list .completion').length === 400")
    assert "400 of 450" in page.inner_text("#completions-note")
    page.focus("#completions-more")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#completions-list .completion').length === 450")
    assert (
        page.inner_text("#completions-note").startswith("450 completions of step")
        and page.locator("#completions-more").is_hidden()
    )
    assert shown_indexes(page) == list(range(8, 458))
    page.wait_for_timeout(1500)  # a poll or two later the loaded rows are still there
    assert len(shown_indexes(page)) == 450

    page.select_option("#completions-step", "0")
    page.wait_for_function(
        "() => /^8 completions of step 1/.test(document.getElementById('completions-note').textContent)"
    )
    assert shown_indexes(page) == list(range(8))
    assert page.locator("#completions-more").is_hidden()
    assert shown_indexes(page, ".completion.best") == [2, 6] and shown_indexes(page, ".completion.worst") == [3, 5]
    assert page.locator(".completion[data-index='2'] .mark.best").text_content() == "best"
    assert page.inner_text(".completion[data-index='1'] [data-function=fb]") == "fb 0.5"

    page.select_option("#completions-sort", "reward-desc")  # the group with the best row first (B: 2.0, A: 1.7)
    page.wait_for_function("() => document.querySelector('#completions-list .completion').dataset.index === '6'")
    assert shown_indexes(page) == [6, 4, 7, 5, 2, 0, 1, 3]
    page.select_option("#completions-sort", "fn:fb")
    page.wait_for_function("() => document.querySelector('#completions-list .completion').dataset.index === '2'")
    assert shown_indexes(page) == [2, 1, 0, 3, 6, 4, 5, 7]
    page.select_option("#completions-sort", "order")

    page.select_option("#completions-function", "fa")  # the marks follow the reward function picked
    page.wait_for_function("() => document.querySelector('.completion.best').dataset.index === '0'")
    assert shown_indexes(page, ".completion.best") == [0, 6] and shown_indexes(page, ".completion.worst") == [1, 5]
    page.fill("#completions-min", "0.5")  # at least 0.5 of fa
    page.wait_for_function("() => document.querySelectorAll('#completions-list .completion').length === 3")
    assert shown_indexes(page) == [0, 4, 6]
    page.select_option("#completions-function", "")  # at least 0.5 of the total reward
    page.wait_for_function("() => document.querySelectorAll('#completions-list .completion').length === 5")
    assert shown_indexes(page) == [0, 1, 2, 4, 6]
    page.fill("#completions-min", "")
    page.check("#completions-truncated")
    page.wait_for_function("() => document.querySelectorAll('#completions-list .completion').length === 3")
    assert shown_indexes(page) == [1, 3, 6]
    assert (
        page.eval_on_selector_all("#completions-list .completion", "xs => xs.map(x => x.dataset.truncated)")
        == ["true"] * 3
    )
    page.uncheck("#completions-truncated")
    page.wait_for_function("() => document.querySelectorAll('#completions-list .completion').length === 8")
    shot(page, "completions-controlled")

    # downloads: the file the browser saves opens in pandas (the completions without the two damaged lines)
    pandas = pytest.importorskip("pandas")
    saved = {}
    for link in ("dl-completions", "dl-csv", "dl-jsonl"):
        with page.expect_download() as info:
            page.click(f"#{link}")
        saved[link] = tmp_path / info.value.suggested_filename
        info.value.save_as(saved[link])
    assert saved["dl-completions"].name == f"{run['id']}-completions.jsonl"
    frame = pandas.read_json(saved["dl-completions"], lines=True)
    assert len(frame) == len(STEP0) + STEP1_ROWS and list(frame["completion"][:2]) == ["answer 0", "answer 1"]
    assert set(frame.columns) >= {"step", "prompt", "completion", "rewards", "reward", "truncated"}
    metrics = pandas.read_csv(saved["dl-csv"])
    assert list(metrics["step"]) == [1] and "reward" in metrics.columns
    assert list(pandas.read_json(saved["dl-jsonl"], lines=True)["step"]) == [1]

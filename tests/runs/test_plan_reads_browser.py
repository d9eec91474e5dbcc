"""The form's memory panel shows the data's prompt lengths and GRPO-H011 as `grpo validate --hardware` prints them
for the same file in the service's folder: the Demo recipe picked from the recipes, a file whose longest prompt
does not fit, imported, and a dataset outside the service's folder once the tab holds the runs token (headless
Chromium, Debian's /usr/bin/chromium through Playwright, a real `grpo serve --enable-runs`). Screenshots go to
test-artifacts/screenshots/runs-*.png."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.plan_reads import DEMO, PROMPT_LINE, folder, prompt_line, service, validate  # noqa: F401
from tests.support.runs_page import import_config, page, shot  # noqa: F401  (page: the fixture)
from tests.support.service import TOKEN

pytestmark = [pytest.mark.browser]


def panel_lines(page) -> list[str]:
    return page.locator("#memory-lines li").all_inner_texts()


def wait_for_prompt_line(page, words: str) -> str:
    page.wait_for_function(
        "(words) => [...document.querySelectorAll('#memory-lines li')].some((li) => li.textContent.includes(words))",
        arg=words,
        timeout=30_000,
    )
    return prompt_line(panel_lines(page))


def test_the_memory_panel_shows_the_datas_prompt_lengths_and_h011(page, service, folder):  # noqa: F811
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    page.wait_for_selector("#preset option[value=demo]", state="attached")
    page.select_option("#preset", "demo")
    shown = wait_for_prompt_line(page, "demo/data/train.jsonl")
    assert shown == prompt_line(validate(folder, DEMO.read_text(), "8GB")["memory_lines"])
    assert "the 95th percentile of 64 rows of demo/data/train.jsonl" in shown
    page.locator("#memory-lines").scroll_into_view_if_needed()
    shot(page, "memory-panel-prompt-lengths")

    rows = [{"prompt": [{"role": "user", "content": "say cat"}]}] * 99
    rows.append({"prompt": [{"role": "user", "content": "say " * 20_000}]})
    (folder / "data").mkdir()
    (folder / "data" / "long.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = DEMO.read_text().replace("dataset_name: demo/data", "dataset_name: ./data/long.jsonl")
    import_config(page, text)
    shown = wait_for_prompt_line(page, "data/long.jsonl")
    cli = validate(folder, text, "8GB")
    assert shown == prompt_line(cli["memory_lines"])
    page.wait_for_selector("#memory-diagnostics li:has-text('GRPO-H011')", timeout=30_000)
    listed = page.inner_text("#memory-diagnostics")
    # the words up to the longest prompt are the CLI's; the GiB after them are grpo_runtime's, the engine the form
    # plans for (grpo validate plans for TRL's)
    cli_h011 = next(d["message"] for d in cli["diagnostics"] if d["code"] == "GRPO-H011")
    assert cli_h011.split("):")[0] in listed, listed
    assert PROMPT_LINE + "7 tokens" in shown
    page.locator("#memory-diagnostics").scroll_into_view_if_needed()
    shot(page, "memory-panel-h011")


def test_the_panel_sends_the_tabs_runs_token_so_a_path_outside_the_folder_is_read(
    page,
    service,
    folder,  # noqa: F811
    tmp_path,
):
    outside = tmp_path / "elsewhere" / "train.jsonl"
    outside.parent.mkdir()
    shutil.copy(folder / "demo" / "data" / "train.jsonl", outside)
    text = DEMO.read_text().replace("dataset_name: demo/data", f"dataset_name: {outside}")
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    import_config(page, text)
    refused = wait_for_prompt_line(page, "send the runs token")
    assert refused.startswith(f"{PROMPT_LINE}512 tokens (a default: the service does not read dataset_name"), refused
    page.goto(service.url + f"/runs#token={TOKEN}")  # the link `grpo serve` prints hands the tab its token
    page.wait_for_function("() => sessionStorage.getItem('grpo-runs-token') !== null", timeout=30_000)
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    import_config(page, text)
    shown = wait_for_prompt_line(page, f"of 64 rows of {outside}")
    assert shown == prompt_line(validate(folder, text, "8GB")["memory_lines"])

"""The form's import, memory panel, suggestions, recipe select, fix focus, export, error count, launch and rough-text
defects, each reproduced in headless Chromium (Debian's /usr/bin/chromium driven by Playwright;
never `playwright install`) against a real uvicorn with runs turned on, as a user drives the form: mouse, keyboard,
reload. One test per defect; each fails on the form as it was before the fix.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from tests.support.browser import sync_api_or_skip
from tests.support.configs import LAUNCHABLE
from tests.support.form_page import (
    TOKEN,
    cli_validate,
    fill_field,
    import_text,
    offline_runs_server,
    open_export,
    open_form,
    ready,
    shots,
    state,
    validations,
    wait_status,
    wait_validated,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """test_form_flow's server, allowing runs of up to 4 processes (a "use world size N" fix can then launch)."""
    with offline_runs_server(tmp_path_factory.mktemp("form-fixes-runs"), runs_max_processes=4) as live:
        yield live


@pytest.fixture
def page(browser, server):
    context = browser.new_context(
        viewport={"width": 1366, "height": 800},
        accept_downloads=True,
        permissions=["clipboard-read", "clipboard-write"],
    )
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    # A refused launch (422) and a refused resume (409) are answers the form shows, logged by the browser too.
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


def active(page) -> dict:
    return page.evaluate("""() => { const a = document.activeElement;
        return {tag: a.tagName, id: a.id, text: (a.textContent || '').trim().slice(0, 80)}; }""")


def diagnostics(page) -> list[dict]:
    return page.evaluate("window.grpoLastResult.diagnostics")


def test_import_asks_before_replacing_offers_undo_and_takes_the_files_world_size(page, tmp_path):
    fill_field(page, "learning_rate", "5e-7")
    page.fill("#world-size", "2")
    wait_status(page, "world size 2")
    mine = state(page)
    page.click("#import-open")
    assert page.locator("#import-replaces").is_visible()
    assert "replaces the 1 setting" in page.inner_text("#import-replaces")
    assert page.inner_text("#import-apply") == "Replace my config"
    page.click("#import-cancel")
    assert state(page) == mine

    import_text(page, "num_processes: 8\nper_device_train_batch_size: 4\nnum_generations: 8\n")
    assert page.input_value("#world-size") == ""  # the toolbar's old 2 no longer overrides the file's 8
    wait_status(page, "^Valid at world size 8")
    exported = open_export(page)
    page.click("#export-close")
    assert "num_processes: 8" in exported and "num_processes: 2" not in exported
    assert cli_validate(exported, tmp_path)["world_size"] == 8

    before = validations(page)
    page.click("#undo-import")  # back to the config and the toolbar as they were before the import
    wait_validated(page, before)
    assert state(page) == mine and page.input_value("#world-size") == "2"
    wait_status(page, "world size 2")

    # the comment's profile: the form picks it, as grpo validate reads it (open-r1's reward name is valid there)
    text = (
        "# grpo: --profile open-r1\ndataset_name: open-r1/OpenR1-Math-220k\nreward_funcs: [accuracy]\n"
        "per_device_train_batch_size: 8\nnum_generations: 8\n"
    )
    cli = cli_validate(text, tmp_path)
    assert cli["valid"] and not cli_validate(text.split("\n", 1)[1], tmp_path)["valid"]
    import_text(page, text)
    page.wait_for_function("() => document.getElementById('profile').value === 'open-r1'")
    wait_status(page, "^Valid at world size 1")


def test_memory_bar_keeps_the_hardware_reads_the_configs_section_and_shows_the_plans_diagnostics(page):
    summary = page.text_content("#memory-summary")
    assert "None" not in summary and "model_name_or_path" in summary  # 12: the empty form says what is missing
    page.fill("#hardware", "2xB200")
    page.wait_for_function("() => document.getElementById('memory-summary').textContent.includes('No estimate')")
    page.reload()
    ready(page)
    assert page.input_value("#hardware") == "2xB200"  # kept with the draft

    page.fill("#hardware", "")
    import_text(
        page,
        "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\nper_device_train_batch_size: 1\n"
        "num_generations: 8\nnum_processes: 8\nhardware: 1xH100-80GB\n",
    )
    page.wait_for_selector("#memory-diagnostics .diag[data-code='GRPO-H007']", timeout=15_000)
    assert "1 GPU" in page.inner_text("#memory-diagnostics")
    page.wait_for_function("() => document.getElementById('memory-summary').textContent.includes('1xH100-80GB')")
    assert "hardware: section" in page.text_content("#memory-summary")
    page.locator("#memory-panel").scroll_into_view_if_needed()
    shots(page, "form-memory-h007")


def _workspace(root: Path) -> None:
    (root / "my-model").mkdir()
    (root / "my-model" / "config.json").write_text(json.dumps({"model_type": "qwen2", "hidden_size": 8}))
    (root / "runs" / "0a1b2c").mkdir(parents=True)  # a run's folder: its GRPO config saved as config.json
    (root / "runs" / "0a1b2c" / "config.json").write_text(json.dumps({"num_generations": 8}))
    (root / "runs" / "0a1b2c" / "run.log").write_text("")
    (root / "runs" / "3d4e5f").mkdir()  # another, before its log was written
    (root / "runs" / "3d4e5f" / "config.json").write_text(json.dumps({"model_name_or_path": "x", "beta": 0.0}))
    (root / "chrome-profile" / "Default").mkdir(parents=True)  # a browser profile: settings, not rows
    (root / "chrome-profile" / "Default" / "Preferences.json").write_text(json.dumps({"browser": {"x": 1}}))
    (root / "chrome-profile" / "Default" / "history.csv").write_text("")
    (root / "prompts").mkdir()
    (root / "prompts" / "train.jsonl").write_text('{"prompt": "2+2?", "solution": "4"}\n')
    (root / "extra.csv").write_text("prompt,solution\n1+1?,2\n")


def suggestion_values(page, field: str) -> list[str]:
    return page.eval_on_selector_all(f"#suggest-{field} button.chip", "bs => bs.map(b => b.dataset.value)")


def test_recent_values_are_committed_ones_and_local_folders_look_like_models_or_datasets(page, tmp_path, monkeypatch):
    _workspace(tmp_path)
    monkeypatch.chdir(tmp_path)  # the service lists folders under its working directory
    open_form(page)
    page.fill("#search", "model_name_or_path")
    field = page.locator("#in-model_name_or_path")
    field.click()
    field.press_sequentially("Qwen/Qwen2.5-0.5B", delay=20)
    page.wait_for_function("() => window.grpoState().model_name_or_path === 'Qwen/Qwen2.5-0.5B'")
    recent = lambda: page.evaluate("JSON.parse(localStorage.getItem('grpo-form-recent') || '{}')")  # noqa: E731
    assert recent().get("model_name_or_path", []) == []  # nothing half-typed is remembered
    field.press("Tab")  # committed: the field loses the focus
    assert recent()["model_name_or_path"] == ["Qwen/Qwen2.5-0.5B"]

    toggle = page.locator("#field-model_name_or_path .suggest-toggle")
    assert toggle.is_visible() and "suggestion" in toggle.inner_text()  # the list says it exists
    toggle.click()
    models = suggestion_values(page, "model_name_or_path")
    assert "./my-model" in models and "Qwen/Qwen2.5-0.5B" in models
    assert not [m for m in models if "runs" in m or "chrome" in m]
    page.fill("#search", "dataset_name")
    page.locator("#field-dataset_name .suggest-toggle").click()
    datasets = suggestion_values(page, "dataset_name")
    assert "./prompts" in datasets and "./extra.csv" in datasets
    assert not [d for d in datasets if "chrome" in d or "runs" in d or "my-model" in d]
    page.locator("#suggest-dataset_name button.chip[data-value='./prompts']").click()  # a pick is committed too
    assert state(page)["dataset_name"] == "./prompts" and recent()["dataset_name"] == ["./prompts"]
    shots(page, "form-suggestions")


def test_arrow_keys_on_start_from_only_browse_and_the_select_shows_the_applied_recipe(page):
    fill_field(page, "learning_rate", "5e-7")
    mine = state(page)
    page.focus("#preset")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(400)
    assert page.locator("#ask-dialog").count() == 0 and state(page) == mine  # browsing did not act
    shown = page.input_value("#preset")
    assert shown and "press Enter or Apply" in page.inner_text("#notice")
    page.keyboard.press("Enter")  # the explicit action
    page.wait_for_selector("#ask-dialog[open]")
    before = validations(page)
    page.click("#ask-dialog-confirm")
    wait_validated(page, before)
    assert state(page) != mine and page.input_value("#preset") == shown  # not "— recipe —"
    page.reload()
    ready(page)
    page.wait_for_function("(v) => document.getElementById('preset').value === v", arg=shown)
    # the Apply button is the keyboard's other way
    page.focus("#preset")
    page.keyboard.press("ArrowDown")
    assert page.locator("#ask-dialog").count() == 0
    page.focus("#preset-apply")
    page.keyboard.press("Enter")
    page.wait_for_selector("#ask-dialog[open]")
    page.click("#ask-dialog-cancel")


def test_arrow_keys_on_the_sharding_and_profile_selects_act_only_once_the_choice_is_committed(page):
    page.focus("#sharding")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(400)
    assert "deepspeed" not in state(page)  # browsing wrote nothing
    choice = page.input_value("#sharding")
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.grpoState().deepspeed !== undefined")
    assert f"zero{state(page)['deepspeed']['zero_optimization']['stage']}" == choice
    schema_requests: list[str] = []
    page.on("request", lambda r: schema_requests.append(r.url) if "/api/v1/schema" in r.url else None)
    page.focus("#profile")
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(400)
    assert schema_requests == []  # no schema reload while browsing
    before = validations(page)
    page.keyboard.press("Tab")  # leaving the select commits the choice
    wait_validated(page, before)
    assert schema_requests and page.input_value("#profile") != ""


def test_enter_on_a_fix_button_moves_the_focus_to_the_changed_field(page):
    import_text(page, "per_device_train_batch_size: 8\nnum_generations: 3\n")
    fix = page.locator("#diag-list .diag[data-code='GRPO-B001'] button.fix:not(.world)").first
    label = fix.inner_text()
    fix.focus()
    before = validations(page)
    page.keyboard.press("Enter")
    wait_validated(page, before)
    page.wait_for_timeout(200)
    now = active(page)
    assert now["tag"] != "BODY", label
    changed = label.split("Fix: ", 1)[1].split(" ")[0]  # "Fix: per_device_train_batch_size 8 -> 9"
    assert now["id"] == f"in-{changed}", (label, now)

    # "Apply safe fixes" goes away once applied: the focus goes to the diagnostics left
    import_text(page, "torch_dtype: bfloat16\nper_device_train_batch_size: 8\nnum_generations: 3\n")
    page.locator("#apply-safe").focus()
    before = validations(page)
    page.keyboard.press("Enter")
    wait_validated(page, before)
    page.wait_for_function("() => document.activeElement !== document.body")
    assert page.evaluate("document.getElementById('diag-list').contains(document.activeElement)")

    # a fix that removes a key of "Other keys" takes its row away: the focus goes to the next diagnostic
    import_text(page, "per_device_train_batch_size: 8\nnum_generations: 8\nnum_generation: 4\nlearning_rat: 1\n")
    fix = page.locator("#diag-list .diag[data-code='GRPO-K001'] button.fix").first
    fix.focus()
    before = validations(page)
    page.keyboard.press("Enter")
    wait_validated(page, before)
    page.wait_for_timeout(200)
    assert active(page)["tag"] != "BODY"


def test_a_recipe_export_drops_comments_that_contradict_its_values_and_its_modeline_resolves(page, tmp_path):
    page.select_option("#preset", "grpo")
    page.wait_for_function("() => window.grpoState().beta !== undefined")
    page.fill("#world-size", "1")
    fill_field(page, "per_device_train_batch_size", "8")
    wait_status(page, "^Valid at world size 1")
    exported = open_export(page)
    notes = page.inner_text("#export-notes")
    page.click("#export-close")
    assert "num_processes: 1" in exported
    assert "World size: 8" not in exported and "4 x 8 x 2 = 64" not in exported
    assert "beta: 0.04" in exported and "# Loss:" in exported  # comments about unchanged values stay
    assert "imported file" not in notes and "recipe" in notes and "Dropped" in notes
    first = exported.split("\n", 1)[0]
    url = first.split("$schema=", 1)[1]
    assert url.startswith("http://") and "../" not in url
    schema = httpx.get(url, timeout=30).json()
    assert "per_device_train_batch_size" in schema["properties"]
    result = cli_validate(exported, tmp_path)
    assert result["valid"] and result["world_size"] == 1, result["diagnostics"]


def test_the_status_counts_every_error_the_list_shows(page):
    import_text(
        page,
        "per_device_train_batch_size: 8\nnum_generations: 3\nlearning_rate: -1\nbeta: 0.1\n"
        "beta: 0.2\nlerning_rate: 1\n",
    )
    wait_status(page, "^Invalid")
    shown = page.locator("#diag-list .diag.error").count()
    assert page.locator("#diag-list .diag[data-code='GRPO-Y003']").count() == 1  # the duplicate key
    assert f"{shown} errors" in page.inner_text("#status"), (shown, page.inner_text("#status"))
    page.reload()
    ready(page)
    wait_status(page, f"{shown} errors")  # the same count after a reload


def test_launch_stays_off_for_a_config_that_would_be_refused_and_offers_the_world_size_fix(page):
    import_text(page, LAUNCHABLE.replace("num_generations: 8", "num_generations: 16"))
    wait_status(page, "^Invalid at world size 1")
    page.click("#launch-open")
    assert page.locator("#launch-apply").is_disabled()
    assert "would refuse" in page.inner_text("#launch-blocked")
    sizes = page.locator("#launch-diagnostics button.fix.world")
    assert sizes.count() >= 1
    size = sizes.first.get_attribute("data-world-size")
    shots(page, "form-launch-blocked")
    sizes.first.click()
    page.wait_for_function("() => !document.getElementById('launch-apply').disabled", timeout=15_000)
    assert page.input_value("#world-size") == size and page.inner_text("#launch-blocked") == ""
    page.click("#launch-cancel")
    wait_status(page, f"^Valid at world size {size}")


def test_rough_text_copy_buttons_and_skip_links(page):
    fill_field(page, "max_steps", "10")
    page.fill("#search", "hub_model_id")  # default null, given a value
    page.fill("#in-hub_model_id", "me/model")
    assert "not set (null)" not in page.inner_text("#field-hub_model_id")
    assert "(default: none)" in page.inner_text("#field-hub_model_id")
    page.fill("#search", "")

    page.click("#command-open")
    copies = page.locator("#command-list button.copy")
    assert copies.count() == page.locator("#command-list pre").count() >= 3
    first_line = page.locator("#command-list pre").first.inner_text()
    copies.first.click()
    page.wait_for_function("() => document.querySelector('#command-list button.copy').textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()") == first_line
    page.click("#command-close")

    open_form(page)  # Tab from the top of the page
    page.keyboard.press("Tab")
    assert active(page)["text"] == "Skip to the fields"
    page.keyboard.press("Tab")
    assert active(page)["text"] == "Skip to the diagnostics"
    page.keyboard.press("Enter")
    assert active(page)["id"] == "diag-title"
    page.keyboard.press("Tab")  # the next stop is in the diagnostics, not the first of ~25 sections
    assert page.evaluate("document.activeElement.closest('.side-pane') !== null")
    for name in ("memory estimate", "sharding and data"):
        assert page.locator("a.skip", has_text=name).count() == 1


def test_a_files_grpo_comment_gives_the_form_the_clis_verdict(page, tmp_path):
    text = "# grpo: --world-size 8\nper_device_train_batch_size: 1\nnum_generations: 8\n"
    cli = cli_validate(text, tmp_path)
    assert cli["valid"] and cli["world_size"] == 8
    assert not cli_validate(text.split("\n", 1)[1], tmp_path)["valid"]  # without the comment: world size 1
    import_text(page, text)
    wait_status(page, "^Valid at world size 8")
    assert page.get_attribute("#world-size", "placeholder").startswith("8")
    page.reload()
    ready(page)
    wait_status(page, "^Valid at world size 8")  # the file's settings are kept with the draft
    exported = open_export(page)
    page.click("#export-close")
    assert exported.split("\n", 1)[1].startswith("# grpo: --world-size 8")
    assert "# grpo: --world-size 8" in page.inner_text("#export-notes")
    assert cli_validate(exported, tmp_path)["world_size"] == 8


def _wait_finished(client: httpx.Client, run_id: str) -> dict:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        run = client.get(f"/api/v1/runs/{run_id}").json()
        if run["state"] in ("succeeded", "failed", "cancelled"):
            return run
        time.sleep(0.5)
    raise AssertionError(f"run {run_id} did not finish")


def test_a_launch_into_another_runs_output_dir_offers_resume_overwrite_or_a_new_folder(page, server):
    config = LAUNCHABLE + "output_dir: shared-out\n"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
        first = client.post("/api/v1/runs", content=config, headers={"Content-Type": "application/yaml"})
        assert first.status_code == 201, first.text
        owner = first.json()["id"]
        _wait_finished(client, owner)

        import_text(page, config)
        wait_status(page, "^Valid")
        page.click("#launch-open")
        page.fill("#launch-token", TOKEN)
        page.click("#launch-apply")
        page.wait_for_selector("#launch-resume", timeout=20_000)
        assert owner in page.inner_text("#launch-error")
        assert "existing_output" not in page.inner_text("#launch-dialog")  # buttons, not query parameters
        assert page.locator("#launch-overwrite").is_visible() and page.locator("#launch-new-folder").is_visible()
        shots(page, "form-output-owned")

        # the failed run has no checkpoint to resume from: Resume is off and says so, a new run comes first
        assert page.locator("#launch-resume").is_disabled()
        assert "no complete checkpoint" in page.inner_text("#launch-resume-why")
        assert page.evaluate("document.activeElement.id") == "launch-new-folder"

        page.click("#launch-overwrite")
        page.wait_for_selector("#overwrite-dialog[open]")
        page.click("#overwrite-dialog-confirm")
        page.wait_for_url("**/runs#run=*", timeout=20_000)
        replacing = page.url.rsplit("run=", 1)[1]
        assert client.get(f"/api/v1/runs/{owner}").json()["replaced_by"] == replacing

        page.go_back()
        ready(page)
        page.click("#launch-open")
        page.fill("#launch-token", TOKEN)
        page.click("#launch-apply")
        page.wait_for_selector("#launch-new-folder", timeout=20_000)
        page.click("#launch-new-folder")
        page.wait_for_url("**/runs#run=*", timeout=20_000)
        fresh = client.get(f"/api/v1/runs/{page.url.rsplit('run=', 1)[1]}").json()
        assert not fresh["output_dir"].endswith("shared-out") and fresh["output_dir"].endswith("/output")
        _wait_finished(client, replacing)

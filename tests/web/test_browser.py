"""The web form in headless Chromium (Debian's /usr/bin/chromium driven by Playwright for Python).

Walks what a user does: load, search, type an invalid value, read the diagnostic beside the field, apply the fix,
import a corpus file, export YAML and check it with the CLI. Screenshots of the key states go to
test-artifacts/screenshots/ for a person to look at; timings go to test-artifacts/web-timings.json and the log.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.artifacts import ARTIFACTS, merge_json
from tests.support.browser import sync_api_or_skip
from tests.support.cli import grpo

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"
TIMINGS: dict[str, float] = {}

pytestmark = pytest.mark.browser
sync_api = sync_api_or_skip()


@pytest.fixture(scope="module", autouse=True)
def timings_written():
    """The page timings this module measured, written for a person to read when it ends."""
    yield
    if TIMINGS:  # beside another worker's share of this module: merged, not overwritten
        merge_json(ARTIFACTS / "web-timings.json", TIMINGS)


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(
        viewport={"width": 1366, "height": 768},
        accept_downloads=True,
        permissions=["clipboard-read", "clipboard-write"],
    )
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.live_server = live_server
    page.goto(live_server.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=15_000)
    yield page
    context.close()
    assert problems == [], problems


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def validations(page) -> int:
    return int(page.evaluate("document.body.dataset.validations || 0"))


def wait_validated(page, after: int) -> None:
    page.wait_for_function("(n) => Number(document.body.dataset.validations || 0) > n", arg=after, timeout=10_000)


def report(capsys, key: str, value: float) -> None:
    TIMINGS[key] = round(value, 1)
    with capsys.disabled():
        print(f"\n[web timing] {key}: {value:.1f}")


def test_page_becomes_interactive_quickly(browser, live_server, capsys):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    started = time.perf_counter()
    page.goto(live_server.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=15_000)
    wall_ms = (time.perf_counter() - started) * 1000
    in_page = page.evaluate("window.grpoMetrics.readyAt")
    report(capsys, "time_to_interactive_ms (navigation start -> first validation drawn, in page)", in_page)
    report(capsys, "time_to_interactive_wall_ms (goto -> ready, Playwright)", wall_ms)
    assert in_page < 10_000  # a sanity bound only; the number itself is reported
    assert page.locator("details.section").count() >= 20
    assert "Valid at world size 1" in page.inner_text("#status")
    shot(page, "01-loaded")
    page.close()


def test_search_type_invalid_see_diagnostic_apply_fix(page, capsys):
    page.fill("#search", "num_generations")
    row = page.locator("#field-num_generations")
    row.wait_for(state="visible")
    assert page.locator("#field-learning_rate").count() == 0 or not page.locator("#field-learning_rate").is_visible()
    before = validations(page)
    started = time.perf_counter()
    page.fill("#in-num_generations", "3")
    page.wait_for_selector("#diag-num_generations .diag.error[data-code='GRPO-B001']")
    report(
        capsys, "type -> diagnostic beside the field_ms (incl. 300 ms debounce)", (time.perf_counter() - started) * 1000
    )
    wait_validated(page, before)
    last = page.evaluate("window.grpoMetrics.validations.at(-1)")
    report(capsys, "validation round trip_ms (request -> drawn, in page)", last["ms"])
    report(capsys, "keystroke -> diagnostics drawn_ms (in page, incl. 300 ms debounce)", last["sinceEdit"])
    assert page.get_attribute("#in-num_generations", "aria-invalid") == "true"
    assert "GRPO-B001" in page.inner_text("#diag-list") and "Invalid" in page.inner_text("#status")
    shot(page, "02-invalid-num-generations")

    # Apply the suggested fix that edits num_generations itself (the buttons follow fix, then alternatives).
    b001 = next(d for d in page.evaluate("window.grpoLastResult.diagnostics") if d["code"] == "GRPO-B001")
    fixes = [b001["fix"], *b001.get("alternatives", [])]
    index = next(i for i, f in enumerate(fixes) if "num_generations" in f["set"])
    before = validations(page)
    page.locator("#diag-num_generations button.fix").nth(index).click()
    wait_validated(page, before)
    assert page.input_value("#in-num_generations") == str(fixes[index]["set"]["num_generations"])
    assert page.locator("#diag-num_generations .diag").count() == 0
    assert page.get_attribute("#in-num_generations", "aria-invalid") == "false"
    assert "Valid at world size 1" in page.inner_text("#status")
    shot(page, "03-fix-applied")


def test_summary_item_scrolls_to_its_field(page):
    before = validations(page)
    page.fill("#world-size", "3")  # 8 x 3 is not a multiple of 16 below
    page.locator("details[data-group=batch] summary").click()  # close the batch section: the link must reopen it
    page.evaluate("document.getElementById('in-num_generations').value = '16'")
    page.dispatch_event("#in-num_generations", "input")
    wait_validated(page, before)
    page.locator("#diag-list button.go", has_text="num_generations").first.click()
    assert page.locator("#in-num_generations").is_visible()
    assert page.evaluate("document.activeElement.id") == "in-num_generations"


def import_file(page, path: Path) -> None:
    before = validations(page)
    page.click("#import-open")
    page.set_input_files("#import-file", str(path))
    page.wait_for_function("() => document.getElementById('import-text').value.length > 0")
    page.click("#import-apply")
    page.wait_for_selector("#import-dialog", state="hidden")
    wait_validated(page, before)


def export_yaml(page, tmp_path: Path, screenshot: str | None = None) -> Path:
    page.click("#export-open")
    page.wait_for_function("() => document.getElementById('export-text').value.length > 0")
    if screenshot:
        shot(page, screenshot)
    page.click("#export-copy")
    page.wait_for_selector("#export-note:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == page.input_value("#export-text")
    with page.expect_download() as download:
        page.click("#export-download")
    target = tmp_path / download.value.suggested_filename
    download.value.save_as(target)
    page.click("#export-close")
    return target


def cli_validate(path: Path, *options: str) -> tuple[int, dict]:
    done = grpo("validate", "--format", "json", *options, str(path))
    return done.returncode, json.loads(done.stdout)["files"][0]


def codes(diagnostics: list[dict]) -> list[tuple]:
    return sorted((d["code"], tuple(d["fields"]), d["message"]) for d in diagnostics)


def test_import_corpus_file_then_export_validates_with_the_cli(page, corpus, tmp_path):
    source = corpus / "valid" / "40_trl_paper_dapo.yaml"
    import_file(page, source)
    assert page.evaluate("window.grpoState().loss_type") == "dapo"
    assert page.input_value("#in-per_device_train_batch_size") == "512"  # an open section shows the value
    assert "Valid" in page.inner_text("#status")
    exported = export_yaml(page, tmp_path, screenshot="07-export-dialog")
    text = exported.read_text()
    assert text.startswith("# yaml-language-server: $schema=")
    returncode, exported_result = cli_validate(exported)
    assert returncode == 0, exported_result
    assert codes(exported_result["diagnostics"]) == codes(cli_validate(source)[1]["diagnostics"])


def test_import_open_r1_file_fix_a_renamed_key_and_export_agrees_with_the_cli(page, corpus, tmp_path):
    source = corpus / "valid" / "01_open-r1_DeepSeek-R1-Distill-Qwen-1.5B_config_demo.yaml"
    before = validations(page)
    page.select_option("#profile", "open-r1")  # the form now has a section for open-r1's script keys
    wait_validated(page, before)
    assert page.locator("details[data-group='profile-open-r1']").count() == 1
    import_file(page, source)
    page.locator("#diag-list button.go", has_text="torch_dtype").click()  # the legacy section opens at the key
    assert page.locator("#diag-torch_dtype .diag.error[data-code='GRPO-K002']").is_visible()
    shot(page, "04-imported-open-r1")
    before = validations(page)
    page.locator("#diag-torch_dtype button.fix").first.click()
    wait_validated(page, before)
    assert "torch_dtype" not in page.evaluate("window.grpoState()")
    assert page.locator("#diag-torch_dtype .diag").count() == 0
    assert page.locator("#in-dtype").input_value() == '"bfloat16"'
    form_result = page.evaluate("window.grpoLastResult")
    returncode, cli_result = cli_validate(export_yaml(page, tmp_path), "--profile", "open-r1")
    assert codes(cli_result["diagnostics"]) == codes(form_result["diagnostics"])
    assert (returncode == 0) == form_result["valid"]
    shot(page, "05-after-rename-fix")


def test_preset_world_size_schedule_and_only_changed(page):
    before = validations(page)
    page.select_option("#preset", "gspo")
    wait_validated(page, before)
    assert "Valid" in page.inner_text("#status")
    derived = page.inner_text("#derived")
    assert "Optimizer steps per generation\n4" in derived or "Optimizer steps per generation\t4" in derived
    ticks = page.locator("#timeline .tick:not(.legend-step)")
    kinds = page.eval_on_selector_all("#timeline .ticks .tick", "ts => ts.map(t => t.className)")
    assert kinds[0].startswith("tick gen") and "reuse" in kinds[1] and all("step" in k for k in kinds)
    assert ticks.count() > 4
    page.check("#only-changed")
    visible = page.eval_on_selector_all(".field", "rows => rows.filter(r => !r.hidden && r.offsetParent).length")
    preset_keys = len(page.evaluate("window.grpoState()"))
    assert 0 < visible <= preset_keys
    shot(page, "06-preset-gspo-only-changed")
    before = validations(page)
    page.fill("#world-size", "2")
    wait_validated(page, before)
    assert "world size 2" in page.inner_text("#status")


def test_every_control_has_a_label_at_laptop_size(page, capsys):
    # toggle events run as tasks: wait for them, unfold, then force a layout before reading the clock
    build_ms = page.evaluate("""async () => { const t = performance.now();
        const settle = () => new Promise(r => setTimeout(r, 0));
        document.querySelectorAll('details.section').forEach(d => { d.open = true; });
        await settle();
        document.querySelectorAll('.advanced-toggle:not([hidden])').forEach(b => b.click());
        void document.body.offsetHeight;
        return performance.now() - t; }""")
    page.wait_for_function("() => document.querySelectorAll('.field').length > 200")
    report(capsys, "open every section and unfold every field_ms (in page)", build_ms)
    report(capsys, "fields rendered", page.locator(".field:visible").count())
    unlabeled = page.evaluate("""() => [...document.querySelectorAll('input, select, textarea')].filter(el =>
        !el.labels?.length && !el.getAttribute('aria-label')).map(el => el.id || el.outerHTML.slice(0, 60))""")
    assert unlabeled == []
    dangling = page.evaluate("""() => [...document.querySelectorAll('[aria-describedby]')].flatMap(el =>
        el.getAttribute('aria-describedby').split(' ').filter(id => !document.getElementById(id)))""")
    assert dangling == []
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1366  # no horizontal scrolling on a laptop screen
    tags = {
        name: page.evaluate(f"document.getElementById('in-{name}').tagName")
        for name in ("datasets", "reward_funcs", "loss_type", "env", "learning_rate")
    }
    assert tags == {
        "datasets": "TEXTAREA",
        "reward_funcs": "INPUT",
        "loss_type": "SELECT",
        "env": "TEXTAREA",
        "learning_rate": "INPUT",
    }


def test_widgets_turn_text_into_typed_values(page):
    before = validations(page)
    page.fill("#search", "datasets")
    page.fill("#in-datasets", '[{"path": "a/b", "split": "train"}]')
    page.fill("#search", "reward_funcs")
    page.fill("#in-reward_funcs", "accuracy_reward, think_format_reward")
    page.fill("#search", "learning_rate")
    page.fill("#in-learning_rate", "3e-6")
    page.fill("#search", "loss_type")
    page.select_option("#in-loss_type", '"dr_grpo"')
    wait_validated(page, before)
    state = page.evaluate("window.grpoState()")
    assert state == {
        "datasets": [{"path": "a/b", "split": "train"}],
        "learning_rate": 3e-6,
        "loss_type": "dr_grpo",
        "reward_funcs": ["accuracy_reward", "think_format_reward"],
    }
    assert page.inner_text("#field-loss_type .choice-doc").startswith("Dr. GRPO")

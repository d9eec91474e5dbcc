"""The batch schedule explains itself, in headless Chromium (Debian's /usr/bin/chromium driven by Playwright; never
`playwright install`): every number with the formula `POST /api/v1/explain` gives for it, the num_iterations
passes and the buffer slice of each micro-step, `grpo explain`'s "why steps_per_generation appears twice"; and a
batch TRL refuses is still shown, with the relation that fails, its diagnostic's code and a fix that works."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser import form_page, sync_api_or_skip
from tests.support.cli import grpo

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()

# Off-policy on purpose: 4 slices per generation, 2 passes over each, an optimizer step every 2 micro-steps.
TWO_PASSES = """\
per_device_train_batch_size: 4
num_generations: 8
gradient_accumulation_steps: 2
steps_per_generation: 4
num_iterations: 2
"""
# per_device_train_batch_size x world size x gradient_accumulation_steps = 3: not whole groups of 8 (GRPO-B001).
PARTIAL_GROUPS = "per_device_train_batch_size: 3\nnum_generations: 8\n"
# 10 completions are not whole micro-batches of 4 (GRPO-B003).
NOT_MICRO_BATCHES = "per_device_train_batch_size: 4\nnum_generations: 2\ngeneration_batch_size: 10\n"


@pytest.fixture
def page(browser, live_server):
    with form_page(browser, live_server.url) as page:
        yield page


def import_yaml(page, text: str) -> None:
    before = int(page.evaluate("document.body.dataset.validations || 0"))
    page.click("#import-open")
    page.fill("#import-text", text)
    page.click("#import-apply")
    page.wait_for_selector("#import-dialog", state="hidden")
    page.wait_for_function("(n) => Number(document.body.dataset.validations || 0) > n", arg=before, timeout=15_000)


def cli_explain_text(text: str, tmp_path: Path) -> str:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    done = grpo("explain", str(path), cwd=ROOT)
    return done.stdout


def test_every_number_shows_its_formula_the_passes_the_slices_and_why(page, tmp_path):
    import_yaml(page, TWO_PASSES)
    derived = page.evaluate("window.grpoLastResult.derived")
    assert derived["generate_every_micro_steps"] == 8 and derived["num_iterations"] == 2
    # Each number the panel shows carries the API's formula for it, as the engine wrote it.
    for key in (
        "generation_batch_size",
        "prompts_per_generation",
        "generate_every_micro_steps",
        "completions_per_optimizer_step",
        "optimizer_steps_per_generation",
        "steps_per_generation",
    ):
        item = page.locator(f"#derived .derived-item[data-key='{key}']")
        assert item.count() == 1, key
        assert derived["formulas"][key] in item.inner_text(), (key, item.inner_text())
    passes = page.locator("#derived .derived-item[data-key='num_iterations']")
    assert passes.count() == 1 and "2" in passes.inner_text()

    # The walk: which slice of the buffer and which pass each micro-step trains on (from the API's schedule).
    schedule = page.evaluate("window.grpoLastResult.schedule")
    rows = page.locator("#timeline .walk li")
    assert rows.count() == len(schedule) >= 16
    for step, row in zip(schedule, rows.all_inner_texts()):
        assert f"slice {step['buffer_slice'] + 1} of 4" in row, row
        assert f"pass {step['iteration']} of 2" in row, row
        assert ("generate" in row.lower()) == step["generates"], row
        if step["optimizer_step"] is not None:
            assert f"optimizer step {step['optimizer_step']}" in row, row
    assert "pass 2 of 2" in rows.nth(5).inner_text() and "slice 2 of 4" in rows.nth(5).inner_text()

    # grpo explain's "why steps_per_generation appears twice", word for word.
    why = page.locator("#schedule-why")
    assert why.count() == 1
    text = cli_explain_text(TWO_PASSES, tmp_path)
    block = text.split("Why steps_per_generation appears twice in the sampler\n", 1)[1].split("\n\n", 1)[0]
    shown = " ".join(why.inner_text().split())
    assert "Why steps_per_generation appears twice" in shown
    for line in block.splitlines():
        assert " ".join(line.split()) in shown, line


def test_an_invalid_batch_shows_the_relation_that_fails_with_its_code_and_fix(page):
    import_yaml(page, PARTIAL_GROUPS)
    derived = page.inner_text("#derived")
    assert "No schedule" not in derived
    holds = page.locator("#derived .relation.holds")
    fails = page.locator("#derived .relation.fails")
    assert fails.count() == 1, derived
    # The derivation as far as it goes, then the relation that breaks, with the numbers.
    assert "per_device_train_batch_size x world_size x steps_per_generation = 3 x 1 x 1 = 3" in holds.first.inner_text()
    broken = fails.first
    assert "generation_batch_size % num_generations = 3 % 8 = 3" in broken.inner_text()
    assert broken.locator(".diag[data-code='GRPO-B001']").count() == 1
    assert "GRPO-B001" in broken.inner_text()
    fix = broken.locator("button.fix").first
    assert fix.inner_text().startswith("Fix: ")

    before = int(page.evaluate("document.body.dataset.validations || 0"))
    fix.click()  # the diagnostic's own fix, from the schedule: the batch becomes valid and the schedule is drawn
    page.wait_for_function("(n) => Number(document.body.dataset.validations || 0) > n", arg=before, timeout=15_000)
    page.wait_for_selector("#derived .derived-item[data-key='generation_batch_size']", timeout=15_000)
    assert page.locator("#derived .relation.fails").count() == 0
    assert page.evaluate("window.grpoLastResult.valid")

    import_yaml(page, NOT_MICRO_BATCHES)
    broken = page.locator("#derived .relation.fails")
    assert broken.count() == 1
    assert "generation_batch_size / (per_device_train_batch_size x world_size) = 10 / (4 x 1)" in broken.inner_text()
    assert broken.locator(".diag[data-code='GRPO-B003']").count() == 1

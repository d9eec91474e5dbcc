"""The Launch dialog's "Smoke test" in headless Chromium (Debian's /usr/bin/chromium): it is judged at the world
size Launch uses (the toolbar's), and its report goes away when the config in the form or that world size changes.

The service allows runs of one process (its default GRPO_WEB_RUNS_MAX_PROCESSES); the config's reward is a module
that does not exist, so a smoke test the service accepts fails within seconds, at importing it."""

import pytest

pytest.importorskip("fastapi", reason="the form tests need the web extra")

from tests.support.form_page import (  # noqa: F401  (page: the fixture)
    TOKEN,
    fill_field,
    import_text,
    offline_runs_server,
    page,
    validations,
    wait_validated,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EIGHT = """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [no_such_module.reward]
per_device_train_batch_size: 8
num_generations: 8
num_processes: 8
"""
OTHER = EIGHT.replace("num_processes: 8\n", "learning_rate: 2.0e-06\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with offline_runs_server(tmp_path_factory.mktemp("smoke-dialog"), runs_allow_reward_imports=True) as live:
        yield live


def toolbar_world_size(page, value: str) -> None:
    before = validations(page)
    page.fill("#world-size", value)
    wait_validated(page, before)


def smoke(page, refused: bool = False) -> str:
    page.expect_offline = refused  # the browser logs the service's 422 as a failed request: expected then
    if not page.evaluate("document.getElementById('launch-dialog').open"):
        page.click("#launch-open")
    page.fill("#launch-token", TOKEN)
    page.click("#smoke-apply")
    page.wait_for_function(
        "() => { const p = document.querySelector('#smoke-report p'); return p && !p.classList.contains('muted'); }",
        timeout=120_000,
    )
    page.expect_offline = False
    return page.inner_text("#smoke-report")


def test_the_smoke_runs_at_launchs_world_size_and_its_report_follows_the_config(page):
    import_text(page, EIGHT)
    toolbar_world_size(page, "1")  # Launch runs 1 process although the file says 8
    page.click("#launch-open")
    assert not page.is_disabled("#launch-apply")
    page.click("#launch-cancel")
    report = smoke(page)
    assert "8 processes" not in report and "GRPO-X" not in report, report
    assert report.startswith("Failed (reward function no_such_module.reward)"), report
    assert "null" not in report, report  # the parts a report lacks are left out, not written as "null"

    # the world size changed: that report is gone; at the toolbar's 2 the smoke is refused as Launch is
    page.click("#launch-cancel")
    toolbar_world_size(page, "2")
    page.click("#launch-open")
    assert page.inner_text("#smoke-report") == ""
    assert "at world size 2" in page.inner_text("#launch-blocked")
    page.click("#launch-cancel")
    report = smoke(page, refused=True)
    assert report.startswith("The service will not run this config:") and "asks for 2 processes" in report, report

    # an edit to the config clears it
    page.click("#launch-cancel")
    fill_field(page, "learning_rate", "3e-6")
    page.click("#launch-open")
    assert page.inner_text("#smoke-report") == ""

    # so does another config opened in the form
    report = smoke(page, refused=True)
    assert "asks for 2 processes" in report, report
    page.click("#launch-cancel")
    import_text(page, OTHER)
    page.click("#launch-open")
    assert page.inner_text("#smoke-report") == ""

"""The form's "Smoke test" button in headless Chromium (Debian's /usr/bin/chromium): the report of a config that
passes, and of one that fails, naming the component, as web/static/js/smoke.js shows them in the Launch dialog."""

import pytest

pytest.importorskip("fastapi", reason="the service tests need the web extra")

from tests.support.run_config import run_yaml
from tests.support.runs_page import import_config, page, shot  # noqa: F401  (page: the fixture)
from tests.support.service import TOKEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def smoke_from_the_dialog(page) -> str:
    page.click("#launch-open")
    page.fill("#launch-token", TOKEN)
    page.click("#smoke-apply")
    page.wait_for_function(
        "() => /^(Passed|Failed)/.test(document.querySelector('#smoke-report p')?.textContent)", timeout=600_000
    )
    return page.inner_text("#smoke-report")


def test_the_smoke_button_shows_a_passed_report_and_a_named_failure(page, make_service, assets):
    service = make_service()
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)

    import_config(page, run_yaml(assets))
    report = smoke_from_the_dialog(page)
    assert report.startswith("Passed: 2 optimizer steps"), report
    assert page.locator("#smoke-report li.smoke-exercised").count() >= 1
    assert "checkpoint save and resume" in page.inner_text(
        "#smoke-report li.smoke-exercised >> nth=-1"
    ) or "checkpoint save and resume" in page.inner_text("#smoke-report ul")
    assert not page.locator("#smoke-report .error-text").count()
    shot(page, "smoke-passed")
    page.click("#launch-cancel")

    # a reward that reads a column the dataset does not have: the report names the component and the column
    import_config(page, run_yaml(assets, reward_funcs=["accuracy_reward"]))
    report = smoke_from_the_dialog(page)
    assert report.startswith("Failed (dataset column)"), report
    assert "'solution'" in report
    assert page.locator("#smoke-report p.error-text").count() == 1
    shot(page, "smoke-failed")

"""The runs page over a run's line, in headless Chromium against a real `grpo serve --enable-runs`: a run that was
resumed already shows its own checkpoints, says who resumed it, keeps Resume off with the reason, and offers the
newest run of its line, which opens at a click. The line is seeded on disk as tests/runs/test_lineage.py seeds it."""

from __future__ import annotations

import pytest

from tests.runs.conftest import TOKEN
from tests.support.run_line import CHILD, PARENT, seed_line
from tests.support.runs_page import page  # noqa: F401  (the page fixture: Chromium, no page errors)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_resumed_run_offers_the_newest_of_its_line_instead_of_resume(page, make_service, tmp_path):  # noqa: F811
    store, _ = seed_line(tmp_path / "runs")
    store.close()
    service = make_service()
    page.goto(f"{service.url}/runs#token={TOKEN}&run={PARENT}")
    page.wait_for_selector("#run-state[data-state=cancelled]")
    assert not page.is_enabled("#resume")
    assert f"resumed by run {CHILD}" in page.inner_text("#resume-why")
    assert page.inner_text("[data-fact=checkpoints] dd") == "checkpoint-500, checkpoint-1000"
    assert CHILD in page.inner_text("[data-fact='resumed by'] dd")
    page.click("#resume-newest")
    page.wait_for_selector("#run-state[data-state=succeeded]")
    assert CHILD in page.inner_text("#run-title") and page.is_hidden("#resume-newest")

"""Run health on the runs page, in headless Chromium: a run whose reward never varies shows its findings with
code, steps and fix, and each is marked on its metric's chart over the steps where it appears; the same report
comes from GET /api/v1/runs/{id}/health (and `grpo health` on the run's directory)."""

from __future__ import annotations

import json

import pytest

from grpo_schema.commands.health import health_command
from tests.support.run_config import run_yaml
from tests.support.runs_page import page, shot  # noqa: F401  (page: the fixture)
from tests.support.service import TOKEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_finding_is_shown_at_its_chart_and_steps(page, make_service, assets, capsys):
    service = make_service()
    # think_format_reward on prompts that never think: every completion scores 0, every group is flat
    run = service.launch(run_yaml(assets, reward_funcs=["think_format_reward"], max_steps=4, save_steps=4))
    finished = service.wait_state(run["id"], ("succeeded", "failed"), timeout=300)
    assert finished["state"] == "succeeded", service.run_log(run["id"])
    with service.client() as client:
        report = client.get(f"/api/v1/runs/{run['id']}/health").json()
        assert client.get(f"/api/v1/runs/{run['id']}/health", headers={"Authorization": "Bearer no"}).status_code == 401
    assert "grpo health: GRPO-A001 warning" in service.run_log(run["id"])  # live, in grpo launch's output
    codes = {f["code"] for f in report["findings"]}
    assert {"GRPO-A001", "GRPO-A009", "GRPO-A007"} <= codes and report["healthy"] is False

    page.goto(f"{service.url}/runs#token={TOKEN}&run={run['id']}")
    page.wait_for_selector("#health-list li[data-code='GRPO-A001']", timeout=60_000)
    item = page.locator("#health-list li[data-code='GRPO-A001']")
    assert item.get_attribute("data-steps") == "1-4"
    text = item.inner_text()
    assert "same reward" in text and "fix: num_generations: 8" in text and "steps 1-4" in text
    # marked on the chart of the metric it is about, over its steps
    mark = page.locator("figure[data-metric='frac_reward_zero_std'] rect.health-mark[data-code='GRPO-A001']")
    assert mark.count() == 1 and (mark.get_attribute("data-from"), mark.get_attribute("data-to")) == ("1", "4")
    assert page.locator("figure[data-metric='grad_norm'] rect.health-mark[data-code='GRPO-A007']").count() == 1
    assert page.locator("figure[data-metric='reward']").count() == 1  # the usual charts stay
    summary = page.locator("#health-summary")
    assert summary.get_attribute("data-healthy") == "false" and "finding" in summary.inner_text()
    shot(page, "run-health")

    # the page shows what `grpo health` says of the same directory
    assert health_command([finished["output_dir"], "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)["runs"][0]
    assert sorted(f["code"] for f in cli["findings"]) == sorted(f["code"] for f in report["findings"])

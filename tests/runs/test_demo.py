"""The form's Demo recipe trains on its first launch from a folder without demo/: the service writes the demo's
model and prompts when runs start (grpo_web.runs.demo_assets), and the launch waits for them (headless Chromium,
Debian's /usr/bin/chromium through Playwright, a real `grpo serve --enable-runs` and a real run). With that off,
the launch is refused at once with GRPO-X010 and how to make them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.runs_page import page, press_launch, shot  # noqa: F401  (page: the fixture)
from tests.support.service import TOKEN

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.yaml"


def test_without_demo_the_demo_recipe_is_refused_at_once_with_how_to_make_it(make_service, tmp_path):
    fresh = tmp_path / "checkout"
    fresh.mkdir()
    service = make_service(cwd=fresh, GRPO_WEB_RUNS_PREPARE_DEMO="0")
    with service.client() as client:
        for endpoint in ("/api/v1/runs", "/api/v1/smoke"):
            answer = client.post(endpoint, content=DEMO.read_text(), headers={"Content-Type": "application/yaml"})
            assert answer.status_code == 422, answer.text
            found = [d for d in answer.json()["diagnostics"] if d["code"] == "GRPO-X010"]
            assert [d["fields"] for d in found] == [["model_name_or_path"], ["dataset_name"]], answer.text
            assert "'demo/model'" in found[0]["message"] and str(fresh) in found[0]["message"]
            assert "grpo demo demo" in found[0]["hint"]
            assert found[0]["line"] == DEMO.read_text().splitlines().index("model_name_or_path: demo/model") + 1
        assert client.get("/api/v1/runs").json()["runs"] == []  # nothing was queued
    assert not (fresh / "demo").exists() and "Demo recipe" not in service.log_text()


@pytest.mark.browser
@pytest.mark.slow
def test_the_demo_recipe_trains_on_its_first_launch_in_a_fresh_folder(page, make_service, tmp_path):  # noqa: F811
    pytest.importorskip("torch", reason="the demo trains with grpo_runtime, which needs torch")
    fresh = tmp_path / "checkout"
    fresh.mkdir()
    service = make_service(cwd=fresh, GRPO_WEB_RUNS_PREPARE_DEMO="1")
    started = time.monotonic()
    assert f"writing the Demo recipe's model and prompts in {fresh / 'demo'}" in service.log_text()
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    page.wait_for_selector("#preset option[value=demo]", state="attached")
    page.select_option("#preset", "demo")
    page.wait_for_function("() => /Valid/.test(document.getElementById('status').textContent)", timeout=15_000)
    press_launch(page, TOKEN)
    page.wait_for_url("**/runs#run=*", timeout=120_000)  # the launch waits while demo/ is written
    run_id = page.url.rsplit("=", 1)[1]
    page.wait_for_selector(
        ",".join(f"#run-state[data-state={s}]" for s in ("succeeded", "failed", "cancelled")), timeout=240_000
    )
    shot(page, "demo-first-launch")
    run = service.run(run_id)
    assert run["state"] == "succeeded", service.run_log(run_id)
    steps = [record["step"] for record in run["metrics"] if "reward" in record]
    assert steps and steps[-1] == 60, run["metrics"][-3:]  # examples/demo.yaml's max_steps, every step logged
    assert (fresh / "demo" / "model" / "config.json").is_file() and (fresh / "demo" / "data" / "train.jsonl").is_file()
    print(f"Demo recipe: service start to a finished run in {time.monotonic() - started:.0f} s")

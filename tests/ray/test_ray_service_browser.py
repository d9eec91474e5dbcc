"""The runs page shows a Ray run as it is (GRPO_WEB_RUNS_BACKEND=ray, the real local Ray cluster of tests/ray), in
headless Chromium (Debian's /usr/bin/chromium through Playwright): its state, Ray's job id and Ray's own state
while it trains; Cancel on the page stops the Ray job (STOPPED, its checkpoints kept) and Resume on the page
submits a new job from the last checkpoint."""

from __future__ import annotations

import pytest

from tests.ray.conftest import demo_text, ray_service_env
from tests.support.browser import open_page, sync_api_or_skip
from tests.support.env import wait_for, wait_until_gone
from tests.support.runs_page import SHOTS
from tests.support.service import TOKEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()


@pytest.fixture
def page(browser, make_service):  # closed before the services stop, so its polling never meets a stopped service
    with open_page(browser, viewport={"width": 1366, "height": 900}) as page:
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
        yield page
    assert problems == [], problems


def fact(page, name: str) -> str:
    return page.inner_text(f'#run-facts [data-fact="{name}"] dd')


def test_the_runs_page_shows_a_ray_runs_state_and_job_and_cancels_and_resumes_it(
    ray_cluster, demo, page, make_service, no_jobs_left
):
    service = make_service(**ray_service_env(ray_cluster))
    run = service.launch(demo_text(demo, max_steps=100000, save_steps=5), world_size=2)["id"]
    page.goto(f"{service.url}/runs#token={TOKEN}&run={run}")
    page.wait_for_selector("#run-state[data-state=running]", timeout=300_000)
    job = service.run(run)["ray"]["job_id"]
    assert fact(page, "backend") == "ray" and fact(page, "Ray job") == job
    page.wait_for_selector('#run-facts [data-fact="Ray state"] dd:text-is("RUNNING")', timeout=120_000)
    wait_for(lambda: service.run(run)["checkpoints"], 300, "a first checkpoint", lambda: service.run_log(run))
    page.wait_for_selector("#charts figure")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "runs-ray-running.png"), full_page=True)

    page.click("#cancel")
    page.click("#cancel-dialog-confirm")
    page.wait_for_selector("#run-state[data-state=cancelled]", timeout=120_000)
    assert fact(page, "Ray state") == "STOPPED" and fact(page, "Ray job") == job
    assert fact(page, "reason").startswith(f"cancelled on request; Ray job {job} STOPPED")
    stopped = service.run(run)
    wait_until_gone(stopped["output_dir"])  # the job's processes on both nodes ended
    last = stopped["checkpoints"][-1]

    page.click("#resume")  # a new run, and a new Ray job, from the last complete checkpoint
    wait_for(lambda: page.inner_text("#run-title") != f"Run {run}", 30, "the resumed run to be shown")
    resumed = page.inner_text("#run-title").split()[-1]
    page.wait_for_selector('#run-facts [data-fact="Ray state"] dd:text-is("RUNNING")', timeout=120_000)
    assert fact(page, "resumed from") == run and fact(page, "Ray job") not in ("", job)
    found = service.run(resumed)
    assert found["resume_from_checkpoint"] == str(stopped["output_dir"]) + "/" + last  # (tests/ray/test_ray_jobs.py
    record = (service.runs_dir / resumed / "ray_job.json").read_text()  # trains a resumed job to its end)
    assert f'"resume": "{found["resume_from_checkpoint"]}"' in record  # the job was submitted to resume from it
    page.screenshot(path=str(SHOTS / "runs-ray-resumed.png"), full_page=True)
    with service.client() as client:
        assert client.post(f"/api/v1/runs/{resumed}/cancel").status_code == 202
    service.wait_state(resumed, ("cancelled",), 120)
    wait_until_gone(stopped["output_dir"])

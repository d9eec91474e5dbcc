"""A run owns its output, reads relative paths from the service's folder, and says why it failed: as a user sees it
in headless Chromium (Debian's /usr/bin/chromium), launching from the form and reading the runs page."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.run_config import run_yaml
from tests.support.runs_page import import_config, page, press_launch, shot  # noqa: F401  (page: the fixture)
from tests.support.service import TOKEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def fact(page, name: str) -> str:
    return page.text_content(f"#run-facts [data-fact='{name}'] dd")


def test_relative_paths_a_refused_second_launch_and_a_failed_run_on_the_runs_page(page, make_service, assets, tmp_path):
    folder = tmp_path / "service-folder"
    shutil.copytree(assets.model, folder / "demo" / "model")
    shutil.copytree(assets.data, folder / "demo" / "data")
    service = make_service(cwd=folder)
    text = (
        run_yaml(assets, max_steps=2, save_steps=2, output_dir="shared/output")
        .replace(str(assets.model), "./demo/model")
        .replace(str(assets.data), "demo/data")
    )
    assert "./demo/model" in text and "demo/data" in text

    # relative paths: the run reads the service folder's demo/ and succeeds; the page shows the resolved paths
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    import_config(page, text)
    press_launch(page, TOKEN)
    page.wait_for_url("**/runs#run=*", timeout=30_000)
    owner = page.url.rsplit("=", 1)[1]
    page.wait_for_selector("#run-state[data-state=succeeded], #run-state[data-state=failed]", timeout=240_000)
    assert page.get_attribute("#run-state", "data-state") == "succeeded", service.run_log(owner)
    assert fact(page, "model_name_or_path") == str((folder / "demo" / "model").resolve())
    assert fact(page, "dataset_name") == str((folder / "demo" / "data").resolve())
    shot(page, "relative-paths")

    # the same config again: its output_dir is the first run's, so the launch is refused naming that run
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    import_config(page, text)
    press_launch(page, TOKEN)
    page.wait_for_selector("#launch-choices #launch-resume", timeout=30_000)
    refusal = page.inner_text("#launch-error")
    assert f"belongs to run {owner}" in refusal, refusal
    # it trained all its steps: nothing to resume (GRPO-A014), so a new run comes first and Resume says why not
    assert page.locator("#launch-resume").is_disabled()
    assert "no step left to train" in page.get_attribute("#launch-resume", "title")
    assert page.url.endswith("/")  # still on the form: nothing was launched
    shot(page, "output-owned")
    page.click("#launch-cancel")

    # a run that fails: its page shows the cause from the log, not only the exit code
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    failed = service.launch(run_yaml(assets, model_name_or_path=str(broken), max_steps=1))
    page.goto(f"{service.url}/runs#token={TOKEN}&run={failed['id']}")
    page.wait_for_selector("#run-state[data-state=failed]", timeout=240_000)
    page.wait_for_selector("#run-facts [data-fact=error]")
    cause = fact(page, "error")
    assert cause.startswith(("ValueError", "OSError", "KeyError")), cause
    assert cause == service.run(failed["id"])["error"] and "exited with code" not in cause
    assert cause.splitlines()[0] in service.run_log(failed["id"])  # the log's own error line
    assert fact(page, "reason").startswith("exited with code")
    shot(page, "failed-cause")

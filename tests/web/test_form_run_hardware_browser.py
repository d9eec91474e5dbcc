"""A run launched from the form keeps the hardware its file declared in a `# grpo: --hardware` comment, so "Edit in
the form" from the runs page brings the config back with that hardware (the memory panel plans on it), in headless
Chromium against a real service whose runs fail at once (offline). The form used to post only the mapping: the
run's record lost the comment, and the config came back without its hardware."""

from __future__ import annotations

import httpx
import pytest

from grpo_schema.engine.loader import load_yaml
from tests.support.configs import LAUNCHABLE
from tests.support.form_page import TOKEN, import_text, page, ready, server, wait_status  # noqa: F401  (page and server: the fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DECLARED = "# grpo: --hardware 1xH100-80GB\n" + LAUNCHABLE + "output_dir: hardware-out\n"


def test_edit_in_the_form_keeps_the_hardware_the_run_s_file_declared(page, server):  # noqa: F811
    import_text(page, DECLARED)
    wait_status(page, "^Valid")
    page.wait_for_function("() => /1xH100-80GB/.test(document.getElementById('memory-panel').textContent)")
    launched = page.evaluate("window.grpoState()")
    page.click("#launch-open")
    page.fill("#launch-token", TOKEN)
    page.click("#launch-apply")
    page.wait_for_url("**/runs#run=*", timeout=30_000)
    run_id = page.url.rsplit("run=", 1)[1]
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as client:
        run = client.get(f"/api/v1/runs/{run_id}").json()
    assert "# grpo: --hardware 1xH100-80GB" in run["config"], run["config"]
    assert load_yaml(run["config"]).data == launched  # the same config, written as YAML under its comment

    page.goto(f"{server.url}/#edit-run={run_id}")
    ready(page)
    page.wait_for_function(
        f"() => /Imported run {run_id}'s config/.test(document.getElementById('notice').textContent)"
    )
    page.wait_for_function(
        "() => /1xH100-80GB \\(the file's # grpo: comment\\)/.test(document.getElementById('memory-panel').textContent)",
        timeout=15_000,
    )
    assert page.evaluate("window.grpoState().output_dir") == "hardware-out"

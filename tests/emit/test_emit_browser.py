"""The form's Launch dialog writes a scheduler's spec (headless Chromium against a real uvicorn): the config in the
form, as a Kubernetes JobSet and a SkyPilot task, is exactly what `grpo launch --emit` prints for the same file;
it downloads under the config's name; a world size that does not split over the nodes says why, with no spec."""

from __future__ import annotations

import shutil

import pytest

from tests.support.browser import sync_api_or_skip
from tests.support.cli import grpo
from tests.support.form_page import import_text, page, server, shots  # noqa: F401  (page and server: the fixtures)
from tests.support.multi_node import EXAMPLES

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()
NAME = "multinode-zero3.yaml"  # num_machines: 2, num_processes: 16, hardware: 2x8xH100-80GB


def cli(tmp_path, target: str, *extra: str) -> str:
    shutil.copyfile(EXAMPLES / NAME, tmp_path / NAME)
    done = grpo("launch", "--emit", target, NAME, *extra, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def write_spec(page) -> None:
    page.click("#emit-apply")
    page.wait_for_function(
        "() => !document.getElementById('emit-text').hidden || "
        "document.getElementById('emit-layout').textContent.startsWith('No spec')",
        timeout=30_000,
    )


def test_the_launch_dialog_writes_the_spec_grpo_launch_emit_prints(page, tmp_path):
    import_text(page, (EXAMPLES / NAME).read_text())
    page.click("#launch-open")
    page.click("#emit summary")
    assert page.locator("#emit-k8s-form-row").is_hidden()  # SkyPilot first: no Kubernetes object to choose
    page.fill("#emit-file", NAME)
    write_spec(page)
    assert page.eval_on_selector("#emit-text", "node => node.textContent") == cli(tmp_path, "skypilot")

    page.select_option("#emit-target", "kubernetes")
    assert page.locator("#emit-k8s-form-row").is_visible()
    page.select_option("#emit-k8s-form", "jobset")
    write_spec(page)
    layout = page.inner_text("#emit-layout")
    assert "2 nodes x 8 processes = world size 16" in layout and f"Save the config as {NAME}" in layout
    expected = cli(tmp_path, "kubernetes", "--k8s-form", "jobset")
    with page.expect_download() as download:
        page.click("#emit-download")
    saved = download.value
    assert saved.suggested_filename == "multinode-zero3.k8s.yaml"
    assert open(saved.path()).read() == expected
    shots(page, "launch-emit")

    page.click("#launch-cancel")
    page.fill("#world-size", "15")  # 15 processes do not split over the config's 2 machines
    page.click("#launch-open")
    page.expect_offline = True  # the 422 is the answer asked for; the browser logs it as a failed load
    write_spec(page)
    assert page.locator("#emit-text").is_hidden()
    assert "No spec: num_processes 15 in the config, but the job has 2 nodes" in page.inner_text("#emit-layout")
    page.expect_offline = False

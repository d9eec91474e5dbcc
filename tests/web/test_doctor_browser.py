"""`grpo doctor` in the form's Launch dialog, in headless Chromium against a real uvicorn with runs on: opening
the dialog judges the service's own interpreter for the config in the form, and the dialog names what
`grpo doctor FILE` names for the same file on that interpreter, with the pin that fixes it."""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from tests.support.browser import sync_api_or_skip
from tests.support.cli import grpo
from tests.support.form_page import ROOT, TOKEN, import_text, page, server, shots  # noqa: F401  (page and server: the fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()

PLAIN = """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [accuracy_reward]
per_device_train_batch_size: 8
num_generations: 8
"""
LIGER = PLAIN + "use_liger_kernel: true\n"


def installed(name: str) -> bool:
    try:
        version(name)
    except PackageNotFoundError:
        return False
    return True


def cli_doctor(text: str, tmp_path: Path) -> dict:
    """`grpo doctor FILE --format json` on the interpreter the service runs in (this one), less what concerns trl
    itself (the service's runs train with grpo_runtime)."""
    from grpo_web.api.doctor import TRL_ONLY

    path = tmp_path / "run.yaml"
    path.write_text(text)
    done = grpo("doctor", "--format", "json", str(path), cwd=ROOT)
    doc = json.loads(done.stdout)
    doc["diagnostics"] = [d for d in doc["diagnostics"] if d["code"] not in TRL_ONLY]
    return doc


def open_launch(page) -> dict:
    page.click("#launch-open")
    page.wait_for_function(
        "() => ['ok', 'warning', 'error', 'unknown'].includes(document.getElementById('launch-doctor')?.dataset.state)",
        timeout=60_000,
    )
    section = page.locator("#launch-doctor")
    return {
        "state": section.get_attribute("data-state"),
        "text": section.inner_text(),
        "codes": section.locator(".diag .code").all_inner_texts(),
    }


def test_the_launch_dialog_names_the_environments_problems_as_grpo_doctor_does(page, tmp_path):
    import_text(page, LIGER)
    shown = open_launch(page)
    expected = cli_doctor(LIGER, tmp_path)
    assert shown["codes"] == [d["code"] for d in expected["diagnostics"]]
    for diag in expected["diagnostics"]:
        assert diag["message"] in shown["text"] and diag["hint"] in shown["text"]
    if not installed("liger-kernel"):  # the service's interpreter has no liger-kernel: the run would fail at import
        assert shown["state"] == "error" and "GRPO-C006" in shown["codes"]
        assert "liger-kernel>=" in shown["text"] and "likely to fail" in shown["text"]
    assert not page.locator("#launch-apply").is_disabled()  # advisories: the environment is the operator's
    shots(page, "launch-doctor")
    page.click("#launch-cancel")

    # The same dialog for a config without the feature: what doctor says of the bare environment, nothing more.
    import_text(page, PLAIN)
    shown = open_launch(page)
    expected = cli_doctor(PLAIN, tmp_path)
    assert shown["codes"] == [d["code"] for d in expected["diagnostics"]]
    assert "GRPO-C006" not in shown["codes"]
    if not expected["diagnostics"]:
        assert shown["state"] == "ok" and "has what this config uses" in shown["text"]

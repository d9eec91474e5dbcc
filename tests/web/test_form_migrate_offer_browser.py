"""An old recipe imported at the service's release gets the migrate offer the CLI and the editor make, in
headless Chromium against a real uvicorn (tests/support/form_page.py): its keys predate the release it is judged
for, so the form offers `grpo migrate --from R` (R the judged release) and writes the same file; after Undo of the
migration the offer is back. Fails on the form as it was, which offered a migration only when the release picker
moved forward."""

from __future__ import annotations

import pytest

from grpo_schema.engine.loader import load_yaml
from tests.support.browser import sync_api_or_skip
from tests.support.cli import grpo
from tests.support.form_page import ROOT, import_text, page, server, state, validations, wait_validated  # noqa: F401  (page and server: the fixtures)
from tests.support.old_recipe import OLD_014_JUDGED_AT_019

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()

# TRL 0.16-era keys, no `# grpo:` comment: judged at the service's release, which reads none of the last four.
OLD_RECIPE = """\
model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
torch_dtype: bfloat16  # the weights as stored
reward_funcs: [think_format_reward]
max_prompt_length: 512
use_vllm: true
vllm_device: cuda:7
per_device_train_batch_size: 8
num_generations: 8
"""


def wait_migrated(page) -> None:
    """The migration's answer is in the form (the service migrates; a check the import started may end first)."""
    page.wait_for_function("() => !('vllm_device' in window.grpoState())", timeout=15_000)


def test_an_old_recipe_at_the_default_release_gets_a_migrate_offer_back_after_undo(page, tmp_path):  # noqa: F811
    import_text(page, OLD_RECIPE)
    offer = page.locator("#migrate-keys")
    offer.wait_for(state="visible", timeout=15_000)
    page.select_option("#migrate-from", "0.16.1")  # written for 0.16: its loss and vLLM mode are written out
    judged = page.evaluate("window.grpoLastResult.trl_version")
    assert judged in offer.inner_text()

    path = tmp_path / "recipe.yaml"
    path.write_text(OLD_RECIPE)
    grpo("migrate", "--write", "--from", "0.16.1", str(path), cwd=ROOT)
    migrated = load_yaml(path.read_text()).data
    assert "vllm_device" not in migrated and migrated["dtype"] == "bfloat16" and migrated["loss_type"] == "grpo"
    assert migrated["vllm_mode"] == "server"  # what vllm_device meant, not 1.16's colocate

    offer.click()
    wait_migrated(page)
    assert state(page) == migrated
    page.wait_for_selector("#migrate-keys", state="hidden", timeout=15_000)  # nothing left to migrate

    before = validations(page)
    page.click("#undo-migrate")
    wait_validated(page, before)
    assert state(page) == load_yaml(OLD_RECIPE).data
    offer.wait_for(state="visible", timeout=15_000)


def test_keys_older_than_an_older_judged_release_get_the_migration_to_it(page, tmp_path):  # noqa: F811
    """A 0.14-era file judged at 0.19 (its comment): the offer migrates it to 0.19, the file that
    `grpo migrate --from 0.14 --to 0.19 --write` writes (the form offered it only at the newest release)."""
    text = OLD_014_JUDGED_AT_019  # `# grpo: --trl-version 0.19`: the picker's 0.19.1
    import_text(page, text)
    page.wait_for_function("() => document.getElementById('trl-version').value === '0.19.1'")
    offer = page.locator("#migrate-keys")
    offer.wait_for(state="visible", timeout=15_000)
    assert "0.19.1" in offer.inner_text()
    choices = page.eval_on_selector_all("#migrate-from option", "(nodes) => nodes.map((n) => n.value)")
    assert choices[0] == "0.14.0" and choices[-1] == "0.19.1"  # forward only: nothing after the judged release
    page.select_option("#migrate-from", "0.14.0")

    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    grpo("migrate", "--write", "--from", "0.14", "--to", "0.19", str(path), cwd=ROOT)
    migrated = load_yaml(path.read_text()).data
    assert "vllm_device" not in migrated and migrated["eval_strategy"] == "steps"

    offer.click()
    wait_migrated(page)
    assert state(page) == migrated
    page.wait_for_selector("#migrate-keys", state="hidden", timeout=15_000)  # nothing left to migrate
    assert "as grpo migrate --from 0.14.0 --to 0.19.1 does" in page.inner_text("#notice")

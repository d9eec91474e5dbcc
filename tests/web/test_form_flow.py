"""The web form carries a config from idea to job without losing work, in the run's headless Chromium
(tests/support/browser.py).

One real uvicorn server (runs turned on, a temp runs directory) serves the whole module; the server is stopped and
started again on the same port to check the form offline and its recovery. Screenshots of each state, at 800 and
1920 px wide, go to test-artifacts/screenshots/form-*.png for a person to look at. The form's fixtures and steps
are tests/support/form_page.py's.
"""

from __future__ import annotations

import pytest

from grpo_schema import check_text
from grpo_schema.commands.migrate import migrate_text
from grpo_schema.engine.loader import load_yaml
from tests.support.form_page import (  # noqa: F401  (page and server: the fixtures)
    OPEN_R1_TEXT,
    TOKEN,
    cli_validate,
    fill_field,
    import_text,
    one_scroll_at_800,
    open_export,
    open_form,
    page,
    ready,
    server,
    shots,
    state,
    validations,
    wait_status,
    wait_validated,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_config_survives_reload_back_the_runs_link_and_launch_back(page):
    page.evaluate("localStorage.clear()")
    open_form(page)
    fill_field(page, "learning_rate", "3e-6")
    fill_field(page, "num_generations", "8")
    fill_field(page, "model_name_or_path", "Qwen/Qwen2.5-1.5B-Instruct")
    page.fill("#world-size", "8")
    before = validations(page)
    page.select_option("#profile", "open-r1")
    wait_validated(page, before)
    edited = state(page)
    assert list(edited) == ["learning_rate", "num_generations", "model_name_or_path"]

    page.reload()
    ready(page)
    assert state(page) == edited and list(state(page)) == list(edited)
    assert page.input_value("#world-size") == "8" and page.input_value("#profile") == "open-r1"
    assert page.input_value("#in-model_name_or_path") == "Qwen/Qwen2.5-1.5B-Instruct"
    assert "as you left it" in page.inner_text("#notice")
    assert "world size 8" in page.inner_text("#status")
    shots(page, "01-restored-after-reload")
    one_scroll_at_800(page)

    page.click("a[href='/runs']")
    page.wait_for_url("**/runs")
    page.go_back()
    ready(page)
    assert state(page) == edited

    # Launch, then Back from the runs page: the config is still there (the run itself fails: no such model).
    # `trl grpo` needs a dataset and a reward source once a model is named (GRPO-S002, GRPO-R004).
    page.select_option("#profile", "")  # service runs refuse profiles (GRPO-X005)
    fill_field(page, "dataset_name", "trl-lib/DeepMath-103K")
    page.fill("#search", "reward_funcs")
    page.locator("#field-reward_funcs .chip[data-value='accuracy_reward']").click()
    page.fill("#search", "")
    edited = state(page)
    page.fill("#world-size", "")
    page.click("#launch-open")
    page.fill("#launch-token", TOKEN)
    page.click("#launch-apply")
    page.wait_for_url("**/runs#run=*", timeout=20_000)
    page.go_back()
    ready(page)
    assert state(page) == edited


def test_an_imported_open_r1_file_gets_its_profile_safe_fixes_and_a_faithful_export(page, tmp_path):
    page.evaluate("localStorage.clear()")
    open_form(page)
    import_text(page, OPEN_R1_TEXT)
    offer = page.locator("#use-profile-open-r1")
    assert offer.is_visible() and "system_prompt" in page.inner_text("#notice")
    assert page.locator("#diag-list button.fix.profile[data-profile='open-r1']").count() >= 1
    shots(page, "02-open-r1-detected")
    before = validations(page)
    offer.click()
    wait_validated(page, before)
    assert page.input_value("#profile") == "open-r1"
    assert page.locator("details[data-group='profile-open-r1']").count() == 1
    assert not [d for d in page.evaluate("window.grpoLastResult.diagnostics") if d["code"] == "GRPO-R002"]

    apply_all = page.locator("#apply-safe")
    assert apply_all.is_visible() and "safe fix" in apply_all.inner_text()
    before = validations(page)
    apply_all.click()
    wait_validated(page, before)
    assert "torch_dtype" not in state(page) and state(page)["dtype"] == "bfloat16"
    assert list(state(page))[1] == "dtype"  # renamed where it stood

    exported = open_export(page)
    shots(page, "03-export-keeps-comments")
    # Exactly what `grpo migrate --write` makes of the same file: comments, order and 1.0 kept
    expected, _, _ = migrate_text(
        OPEN_R1_TEXT, check_text(OPEN_R1_TEXT, profiles=["open-r1"], suggest_fixes=False).diagnostics
    )
    modeline, body = exported.split("\n", 1)
    assert modeline.startswith("# yaml-language-server: $schema=") and body == expected
    assert "learning_rate: 1.0e-06" in exported and "temperature: 1.0  # sampling" in exported
    assert "dtype: bfloat16  # renamed to dtype in TRL 1.16" in exported
    assert "Written into the imported file" in page.inner_text("#export-notes")
    page.click("#export-close")

    # an edit in the form lands on its own line of the file; everything else stays
    fill_field(page, "temperature", "0.7")
    exported = open_export(page)
    assert "temperature: 0.7  # sampling" in exported
    assert exported.replace("temperature: 0.7", "temperature: 1.0").split("\n", 1)[1] == expected
    page.click("#export-close")
    result = cli_validate(exported, tmp_path, "--profile", "open-r1")
    assert result["valid"], result["diagnostics"]


def test_the_world_size_is_exported_or_the_export_says_it_is_not(page, tmp_path):
    page.evaluate("localStorage.clear()")
    open_form(page)
    import_text(page, "per_device_train_batch_size: 8\nnum_generations: 8\nsteps_per_generation: 4\n")
    page.fill("#world-size", "8")
    wait_status(page, "^Valid at world size 8")
    exported = open_export(page)
    assert load_yaml(exported).data["num_processes"] == 8
    assert "num_processes: 8 written" in page.inner_text("#export-notes")
    assert cli_validate(exported, tmp_path)["world_size"] == 8
    shots(page, "04-export-world-size")

    page.uncheck("#export-world-size")
    page.wait_for_function("() => /NOT in this file/.test(document.getElementById('export-notes').textContent)")
    assert "num_processes" not in load_yaml(page.input_value("#export-text")).data
    assert "--world-size 8" in page.inner_text("#export-notes")
    shots(page, "05-export-world-size-not-written")
    page.click("#export-close")


def test_world_size_suggestions_are_buttons_everywhere(page):
    page.evaluate("localStorage.clear()")
    open_form(page)
    import_text(page, "per_device_train_batch_size: 8\nnum_generations: 16\n")
    page.fill("#world-size", "3")  # 8 x 3 completions are not whole groups of 16
    wait_status(page, "^Invalid at world size 3")
    hinted = page.locator("#diag-list button.fix.world").first
    size = hinted.get_attribute("data-world-size")
    shots(page, "06-world-size-buttons")
    hinted.click()
    assert page.input_value("#world-size") == size
    wait_status(page, f"^Valid at world size {size}")
    page.locator("#derived-notes button[data-world-size='4']").click()
    wait_status(page, "^Valid at world size 4")
    assert page.input_value("#world-size") == "4"
    assert page.locator("#derived-notes button[data-world-size='4']").get_attribute("aria-pressed") == "true"


def test_a_recipe_asks_before_replacing_offers_undo_and_follows_the_profile(page):
    page.evaluate("localStorage.clear()")
    open_form(page)
    fill_field(page, "learning_rate", "5e-7")
    mine = state(page)
    page.select_option("#preset", "dapo")
    page.wait_for_selector("#ask-dialog[open]")
    assert "replaces the 1 setting" in page.inner_text("#ask-dialog")
    shots(page, "07-recipe-asks")
    page.click("#ask-dialog-cancel")
    assert state(page) == mine

    before = validations(page)
    page.select_option("#preset", "dapo")
    page.click("#ask-dialog-confirm")
    wait_validated(page, before)
    assert state(page)["loss_type"] == "dapo" and state(page)["reward_funcs"] == ["accuracy_reward"]
    before = validations(page)
    page.click("#undo-preset")
    wait_validated(page, before)
    assert state(page) == mine

    before = validations(page)
    page.select_option("#profile", "open-r1")
    wait_validated(page, before)
    before = validations(page)
    page.select_option("#preset", "dapo")
    page.click("#ask-dialog-confirm")
    wait_validated(page, before)
    assert state(page)["reward_funcs"] == ["accuracy"]  # open-r1's name for TRL's accuracy_reward
    assert "accuracy_reward is accuracy in open-r1's registry" in page.inner_text("#notice")
    assert "Valid" in page.inner_text("#status")
    assert not [d for d in page.evaluate("window.grpoLastResult.diagnostics") if d["severity"] == "error"]
    # reward_funcs: a picker over the active registry
    page.fill("#search", "reward_funcs")
    chips = page.locator("#field-reward_funcs .picker .chip")
    assert "tag_count" in chips.all_inner_texts() and "accuracy_reward" not in chips.all_inner_texts()
    page.locator("#field-reward_funcs .chip[data-value='format']").click()
    assert state(page)["reward_funcs"] == ["accuracy", "format"]
    shots(page, "08-recipe-under-open-r1")


def test_offline_editing_and_export_then_recovery_when_the_server_returns(page, server, tmp_path):
    page.evaluate("localStorage.clear()")
    open_form(page)
    before = validations(page)
    page.fill("#search", "num_generations")
    page.fill("#in-num_generations", "3")
    page.wait_for_selector("#diag-num_generations .diag.error button.fix")
    wait_validated(page, before)
    page.expect_offline = True  # failed requests are logged by the browser while the server is away
    server.stop()
    page.fill("#in-num_generations", "5")  # still invalid, but the shown B001 is about 3
    page.wait_for_selector("body[data-offline=true]", timeout=15_000)
    assert "stale" in page.inner_text("#status")
    assert page.locator("#diag-num_generations button.fix").count() > 0
    assert all(b.is_disabled() for b in page.locator("button.fix").all())
    shots(page, "09-offline-stale")
    page.fill("#search", "")
    fill_offline = page.locator("#in-learning_rate")
    page.fill("#search", "learning_rate")
    fill_offline.fill("2.5e-6")
    page.fill("#search", "")

    # the profile schema cannot come; the select goes back, and the failure is not kept
    page.select_option("#profile", "open-r1")
    page.wait_for_function("() => document.getElementById('profile').value === ''")
    assert "Could not load the open-r1 schema" in page.inner_text("#notice")

    exported = open_export(page)
    assert page.evaluate("document.getElementById('export-dialog').dataset.mode") == "offline"
    assert load_yaml(exported).data == state(page) == {"num_generations": 5, "learning_rate": 2.5e-6}
    assert exported.startswith("# yaml-language-server: $schema=grpo-config.schema.json\n")
    assert "written by the form" in page.inner_text("#export-notes")
    shots(page, "10-offline-export")
    page.click("#export-close")

    server.start()  # the same URL: the form notices by itself
    page.wait_for_function("() => !document.body.dataset.offline", timeout=20_000)
    page.wait_for_function("() => /Invalid/.test(document.getElementById('status').textContent)")
    page.wait_for_selector("#diag-num_generations .diag.error[data-code='GRPO-B001']")
    assert not any(b.is_disabled() for b in page.locator("#diag-list button.fix").all())
    fixes = page.evaluate("window.grpoLastResult.diagnostics.find(d => d.code === 'GRPO-B001').fix.set")
    assert fixes  # fixes for 5, not for 3
    page.expect_offline = False
    before = validations(page)
    page.select_option("#profile", "open-r1")
    wait_validated(page, before)
    assert page.locator("details[data-group='profile-open-r1']").count() == 1
    shots(page, "11-recovered")


def test_run_policy_findings_show_live_with_their_fix(page):
    page.evaluate("localStorage.clear()")
    open_form(page)
    fill_field(page, "output_dir", "/tmp/outside-the-runs-dir")
    page.locator("#diag-list button.go", has_text="output_dir").first.click()  # the summary leads to the field
    page.wait_for_selector("#diag-output_dir .diag.launch[data-code='GRPO-X004']")
    assert "Launch would be refused" in page.inner_text("#status")
    assert "at launch" in page.inner_text("#diag-output_dir").lower()
    shots(page, "12-run-policy-live")
    before = validations(page)
    page.locator("#diag-output_dir .diag.launch button.fix").click()
    wait_validated(page, before)
    assert "output_dir" not in state(page)
    assert "Launch would be refused" not in page.inner_text("#status")


def test_command_preview_saved_configs_and_sharding(page):
    page.evaluate("localStorage.clear()")
    open_form(page)
    page.select_option("#preset", "grpo")
    page.wait_for_function("() => window.grpoState().beta !== undefined")
    page.fill("#world-size", "8")
    before = validations(page)
    page.select_option("#sharding", "zero3")
    page.check("#sharding-offload")
    wait_validated(page, before)
    wait_status(page, "^Valid at world size 8")
    zero = state(page)["deepspeed"]["zero_optimization"]
    assert zero["stage"] == 3 and zero["offload_param"]["device"] == "cpu"
    page.click("#command-open")
    lines = page.locator("#command-list pre").all_inner_texts()
    assert "grpo launch grpo-config.yaml --num-processes 8" in lines
    assert any(line.startswith("accelerate launch --num_processes 8") and "--use_deepspeed" in line for line in lines)
    assert "trl grpo --config grpo-config.yaml" in lines  # the recipe's file says num_processes: 8 itself
    shots(page, "13-command-preview")
    page.click("#command-close")

    page.click("#saved-open")
    page.fill("#saved-name", "kl-zero3")
    page.click("#saved-form button[type=submit]")
    page.wait_for_selector("#saved-list li[data-name='kl-zero3']")
    page.click("#saved-close")
    saved = state(page)
    page.select_option("#sharding", "fsdp")
    assert "deepspeed" not in state(page) and state(page)["fsdp"] == "full_shard auto_wrap offload"
    page.click("#saved-open")
    page.click("#saved-list li[data-name='kl-zero3'] button.load")
    page.click("#ask-dialog-confirm")
    assert state(page) == saved
    assert page.input_value("#sharding") == "zero3"


TRICKY = {
    "model_name_or_path": "Qwen/Qwen2.5-1.5B-Instruct",
    "learning_rate": 1e-6,
    "beta": 0.04,
    "max_steps": -1,
    "bf16": True,
    "push_to_hub": False,
    "hub_model_id": None,
    "run_name": "yes",
    "seed_text": "8",
    "lr_text": "1e-6",
    "empty": "",
    "system_prompt": "line one\n  line two: with colon # and hash",
    "chat": "quote \" and 'single' and é ✓",
    "reward_funcs": ["accuracy_reward", "format"],
    "report_to": [],
    "reward_weights": [1, 0.5],
    "model_init_kwargs": {"attn_implementation": "sdpa", "nested": {"a": [1, {"b": None}]}},
    "datasets": [{"path": "a/b", "split": "train"}, {"path": "c", "columns": ["x", "y"]}],
    "env": {},
    "big": 123456789012,
    "tiny": 2.5e-12,
    "weird key: colon": "v",
    "null_text": "null",
    "tilde": "~",
    "eps": 1e-7,
}


def test_the_offline_yaml_writer_reads_back_as_the_same_config(page):
    text = page.evaluate("(config) => import('/static/js/yamlwrite.js').then((m) => m.toYaml(config))", TRICKY)
    loaded = load_yaml(text)
    assert loaded.ok, loaded.diagnostics
    assert loaded.data == TRICKY and list(loaded.data) == list(TRICKY)
    assert "eps: 1.0e-07" in text  # JavaScript writes 1e-7, which YAML 1.1 reads as text


OLD_RELEASE_RECIPE = """model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
torch_dtype: bfloat16
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [think_format_reward]  # 0.19.1's script registers only this one
max_prompt_length: 512
per_device_train_batch_size: 8
num_generations: 8
"""


def test_the_release_picker_judges_the_config_as_that_trl_release(page):
    """A file written for TRL 0.19: invalid for 1.16 (old names), valid once 0.19 is picked; the choice survives a
    reload, and the schema behind the form is 0.19's (torch_dtype is one of its fields)."""
    import_text(page, OLD_RELEASE_RECIPE)
    wait_status(page, "^Invalid")
    assert "GRPO-K002" in page.inner_text("#diag-list")
    options = page.eval_on_selector_all("#trl-version option", "os => os.map(o => o.value)")
    assert "0.19.1" in options and options[0] == ""
    before = validations(page)
    page.select_option("#trl-version", "0.19.1")
    wait_validated(page, before)
    wait_status(page, "^Valid")
    assert "GRPO-K002" not in page.inner_text("#diag-list")
    page.fill("#search", "torch_dtype")
    assert page.locator("#in-torch_dtype").count() == 1  # a field of 0.19's schema
    page.fill("#search", "")
    shots(page, "trl-release")
    open_form(page)
    assert page.input_value("#trl-version") == "0.19.1"
    wait_status(page, "^Valid")

"""The form honours the TRL release picked in it, in headless Chromium (Debian's /usr/bin/chromium driven by
Playwright; never `playwright install`) against a real uvicorn: moving a config to a newer release migrates it as
`grpo migrate --from A` does, the choices, reward names and texts are the picked release's, and the memory panel
and the schedule count what that release runs. Each test fails on the form as it was before its fix.
"""

from __future__ import annotations

import json

import pytest

from grpo_schema.engine.loader import load_yaml
from tests.support.browser import sync_api_or_skip
from tests.support.cli import grpo
from tests.support.form_page import (  # noqa: F401  (page and server: the fixtures)
    ROOT,
    import_text,
    open_export,
    page,
    server,
    state,
    validations,
    wait_status,
    wait_validated,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()

# A recipe written for TRL 0.19.1, as its `# grpo:` comment says: an old key name, a key 1.16 no longer reads, and
# defaults left out that 1.16 changed (loss_type, vllm_mode, optim, average_tokens_across_devices).
RECIPE_0_19 = """\
# grpo: --trl-version 0.19.1
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
torch_dtype: bfloat16  # the model's weights as stored
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [think_format_reward]
max_prompt_length: 512
per_device_train_batch_size: 8
num_generations: 8
use_vllm: true
"""


def cli_migrate(text: str, tmp_path, *options: str) -> tuple[str, str]:
    """`grpo migrate --write` on the text: (the migrated file, what it printed)."""
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    done = grpo("migrate", "--write", *options, str(path), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return path.read_text(), done.stderr


def test_moving_a_0_19_recipe_to_1_16_migrates_it_as_grpo_migrate_does(page, tmp_path):
    import_text(page, RECIPE_0_19)
    page.wait_for_function("() => document.getElementById('trl-version').value === '0.19.1'")
    wait_status(page, "^Valid")
    before = validations(page)
    page.select_option("#trl-version", "")  # the service's release: 1.16
    wait_validated(page, before)
    offer = page.locator("#migrate-release")
    offer.wait_for(timeout=15_000)
    assert "0.19.1" in offer.inner_text()

    expected, printed = cli_migrate(RECIPE_0_19, tmp_path, "--from", "0.19.1")
    before = validations(page)
    offer.click()
    wait_validated(page, before)
    assert state(page) == load_yaml(expected).data  # loss_type bnpo, vllm_mode server, optim, ... written out
    notice = page.inner_text("#notice")
    assert "cannot keep" in notice and "max_prompt_length" in notice and "max_prompt_length" in printed
    assert "loss_type: bnpo" in notice
    exported = open_export(page)
    page.click("#export-close")
    assert load_yaml(exported).data == load_yaml(expected).data
    assert "# the model's weights as stored" in exported and "--trl-version 1.16" in exported

    before = validations(page)
    page.click("#undo-migrate")
    wait_validated(page, before)
    assert state(page) == load_yaml(RECIPE_0_19).data
    assert "0.19.1" in page.locator("#migrate-release").inner_text()  # the offer is back after the Undo


# On-policy with vLLM: one generation per optimizer step. TRL 1.16 runs vLLM inside the training processes by
# default (colocate) and computes old log-probs for its importance-sampling correction; TRL 0.19.1 runs vLLM as a
# server on GPUs of its own and has no such correction, so it skips that forward pass.
VLLM_ON_POLICY = """\
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
dataset_name: trl-lib/DeepMath-103K
reward_funcs: [think_format_reward]
per_device_train_batch_size: 8
num_generations: 8
use_vllm: true
"""


def cli_json(command: str, text: str, tmp_path, *options: str) -> dict:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    done = grpo(command, "--format", "json", *options, str(path), cwd=ROOT)
    document = json.loads(done.stdout)
    return document["files"][0] if "files" in document else document


def pick_release(page, release: str) -> None:
    before = validations(page)
    page.select_option("#trl-version", release)
    wait_validated(page, before)


def memory_summary(page, total_gib: str) -> str:
    page.wait_for_function(
        "(t) => document.getElementById('memory-summary').textContent.startsWith(t)",
        arg=f"{total_gib} of",
        timeout=15_000,
    )
    return page.inner_text("#memory-summary")


def test_the_memory_panel_counts_what_the_picked_release_runs(page, tmp_path):
    import_text(page, VLLM_ON_POLICY)
    gib = lambda plan: f"{plan['per_gpu']['total_bytes'] / 2**30:.1f}"  # noqa: E731  (as the panel prints it)
    # the service plans for the runtime its runs use
    at_116 = cli_json("plan", VLLM_ON_POLICY, tmp_path, "--hardware", "8xH100-80GB", "--engine", "grpo_runtime")
    memory_summary(page, gib(at_116))
    assert page.locator("#memory-bar [data-part=vllm]").count() == 1  # 1.16: vLLM colocated on the training GPUs

    pick_release(page, "0.19.1")
    at_019 = cli_json(
        "plan",
        VLLM_ON_POLICY,
        tmp_path,
        "--hardware",
        "8xH100-80GB",
        "--engine",
        "grpo_runtime",
        "--trl-version",
        "0.19.1",
    )
    assert gib(at_019) != gib(at_116)
    memory_summary(page, gib(at_019))
    assert page.locator("#memory-bar [data-part=vllm]").count() == 0  # 0.19.1: vLLM is a server of its own


def test_the_schedule_says_old_log_probs_as_the_picked_release_computes_them(page, tmp_path):
    import_text(page, VLLM_ON_POLICY)
    shown = lambda: page.inner_text("#derived [data-key=old_logprobs_needed] dd")  # noqa: E731
    assert shown() == "yes"  # 1.16: computed for vLLM's importance-sampling correction
    assert cli_json("explain", VLLM_ON_POLICY, tmp_path)["derived"]["old_logprobs_needed"] is True
    pick_release(page, "0.19.1")
    explained = cli_json("explain", VLLM_ON_POLICY, tmp_path, "--trl-version", "0.19.1")
    assert explained["derived"]["old_logprobs_needed"] is False  # 0.19.1 has no correction: on-policy, skipped
    page.wait_for_function(
        "() => document.querySelector('#derived [data-key=old_logprobs_needed] dd').textContent === 'no'",
        timeout=15_000,
    )


def test_at_0_19_the_form_offers_0_19s_losses_and_reward_names_and_r007_names_its_registry(page, tmp_path):
    """0.19.1's trainer knows grpo, bnpo and dr_grpo (bnpo the default); its `trl grpo` script registers only
    think_format_reward. A name of open-r1's registry (format) is GRPO-R007, naming 0.19.1's registry."""
    text = VLLM_ON_POLICY.replace("[think_format_reward]", "[format]")
    import_text(page, text)
    pick_release(page, "0.19.1")
    page.fill("#search", "loss_type")
    losses = page.eval_on_selector_all("#in-loss_type option", "os => os.map(o => o.textContent)")
    assert losses == ["— default: bnpo —", "grpo", "dr_grpo", "bnpo"]

    cli = cli_json("validate", text, tmp_path, "--trl-version", "0.19.1")
    r007 = [d for d in cli["diagnostics"] if d["code"] == "GRPO-R007"]
    assert len(r007) == 1 and "TRL 0.19.1's built-ins (think_format_reward)" in r007[0]["message"], r007
    assert [d["code"] for d in page.evaluate("window.grpoLastResult.diagnostics")] == [
        d["code"] for d in cli["diagnostics"]
    ]
    assert r007[0]["message"] in page.inner_text("#diag-list")

    page.fill("#search", "reward_funcs")
    picker = page.locator(".picker[aria-label*='built-in rewards']")
    assert picker.get_attribute("aria-label") == "TRL 0.19.1's built-in rewards"
    assert picker.locator(".chip").all_inner_texts() == ["think_format_reward"]
    accuracy_at_019 = cli_json(
        "validate",
        VLLM_ON_POLICY.replace("[think_format_reward]", "[accuracy_reward]"),
        tmp_path,
        "--trl-version",
        "0.19.1",
    )
    assert [d["code"] for d in accuracy_at_019["diagnostics"] if d["code"].startswith("GRPO-R")] == ["GRPO-R002"]

    pick_release(page, "")  # back to the service's 1.16: its four names
    page.fill("#search", "reward_funcs")
    assert page.locator(".picker[aria-label*='built-in rewards'] .chip").count() == 4


def test_the_picker_lists_each_release_once_and_a_filter_counts_in_the_singular(page):
    options = page.eval_on_selector_all("#trl-version option", "(nodes) => nodes.map((n) => [n.value, n.textContent])")
    default = options[0][1].split(" ")[0]
    assert [value for value, _ in options[1:]].count(default) == 0  # the service's release is the first option alone
    assert len({value for value, _ in options}) == len(options)
    assert "(the service's: " in options[0][1] and not options[0][1].endswith(("installed)", "default)")), options[0]
    page.fill("#search", "ds3_gather_for_generation")  # one field has this name, and no other description says it
    page.wait_for_function("() => /matching field/.test(document.getElementById('filter-count').textContent)")
    assert page.text_content("#filter-count") == "1 matching field"

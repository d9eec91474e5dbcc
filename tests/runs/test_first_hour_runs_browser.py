"""What a new user meets after the first launch, in headless Chromium (Debian's /usr/bin/chromium through
Playwright) against a real `grpo serve --enable-runs` and real runs of the tiny local model: a finished run is not
offered as something to resume, the address names the run shown (edits and Back move between runs), a restart
keeps the token a tab holds (and a stale one is asked for again, never used on), completions are numbered as the
charts are, and the ETA keeps the pace of the run's wall clock."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.support.form_page import validations, wait_validated
from tests.support.run_config import run_yaml
from tests.support.runs_page import import_config, page, press_launch, shot  # noqa: F401  (page: the fixture)
from tests.support.service import TOKEN

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def open_run(page, service, run_id: str) -> None:
    page.goto(f"{service.url}/runs#token={TOKEN}&run={run_id}")
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector(f"#run-title:text('Run {run_id}')")


def test_a_run_that_trained_every_step_is_not_offered_to_resume_and_going_on_is_one_click(page, make_service, assets):
    service = make_service()
    text = run_yaml(assets, max_steps=2, save_steps=2, output_dir="finished/output")
    done = service.launch(text)["id"]
    service.wait_state(done, ("succeeded",), timeout=240)

    # the runs page: Resume is off and says why, as run health's GRPO-A014 would after the fact
    open_run(page, service, done)
    page.wait_for_selector("#run-state[data-state=succeeded]")
    assert page.locator("#resume").is_disabled()
    why = page.inner_text("#resume-why")
    assert "no step left to train" in why and "checkpoint-2" in why and "GRPO-A014" in why, why
    with service.client() as client:  # the API refuses it the same way instead of a run that trains nothing
        answer = client.post(f"/api/v1/runs/{done}/resume")
    assert answer.status_code == 409 and "no step left to train" in answer.text, answer.text
    assert page.inner_text("#resume-more") == "Continue to step 4"  # the fix, one click away
    assert "primary" in page.get_attribute("#edit-in-form", "class")  # a new run from it comes first

    # Edit in the form: the run's config comes into the form; launched into that output_dir again, a new run
    # comes first and Resume is off with why
    page.click("#edit-in-form")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    page.wait_for_function(f"() => /Imported run {done}'s config/.test(document.getElementById('notice').textContent)")
    assert page.evaluate("window.grpoState().output_dir") == "finished/output" and "edit-run" not in page.url
    page.wait_for_function("() => /Valid/.test(document.getElementById('status').textContent)", timeout=15_000)
    press_launch(page, TOKEN)
    page.wait_for_selector("#launch-choices button", timeout=30_000)
    buttons = page.locator("#launch-choices > button")
    assert buttons.all_inner_texts() == ["Launch into a new folder", "Overwrite", "Resume that run"]
    page.wait_for_function("() => document.activeElement.id === 'launch-new-folder'", timeout=5_000)
    # a later verdict on the same config (an import's second check, arriving late) keeps the ways on and the focus
    before = validations(page)
    page.dispatch_event("#world-size", "input")
    wait_validated(page, before)
    assert page.is_visible("#launch-choices") and page.evaluate("document.activeElement.id") == "launch-new-folder"
    assert page.locator("#launch-resume").is_disabled()
    assert "no step left to train" in page.inner_text("#launch-resume-why")
    shot(page, "finished-run-choices")

    # one click raises max_steps (the A014 fix) and resumes: the new run trains the steps after the checkpoint
    page.click("#launch-continue")
    page.wait_for_url("**/runs#run=*", timeout=30_000)
    resumed = page.url.rsplit("=", 1)[1]
    run = service.wait_state(resumed, ("succeeded", "failed"), timeout=240)
    assert run["state"] == "succeeded" and run["resumed_from"] == done, service.run_log(resumed)
    assert run["step"] == 4 and run["resume_from_checkpoint"].endswith("checkpoint-2")

    # on the runs page, "Continue to step 8" resumes it again with max_steps raised in its config
    page.wait_for_selector("#resume-more:not([hidden])", timeout=30_000)
    assert page.inner_text("#resume-more") == "Continue to step 8"
    page.click("#resume-more")
    page.wait_for_function(f"() => !location.hash.endsWith('{resumed}')", timeout=30_000)
    again = page.url.rsplit("=", 1)[1]
    run = service.wait_state(again, ("succeeded", "failed"), timeout=240)
    assert run["state"] == "succeeded" and run["step"] == 8 and run["resumed_from"] == resumed, service.run_log(again)
    assert yaml.safe_load(run["config"])["max_steps"] == 8 and run["resume_from_checkpoint"].endswith("checkpoint-4")


def test_launch_into_a_new_folder_keeps_the_forms_output_dir(page, make_service, assets):
    service = make_service()
    text = run_yaml(assets, max_steps=2, save_steps=2, output_dir="taken/output")
    owner = service.launch(text)["id"]
    service.wait_state(owner, ("succeeded",), timeout=240)
    page.goto(service.url + "/")
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    import_config(page, text)
    press_launch(page, TOKEN)
    page.wait_for_selector("#launch-new-folder", timeout=30_000)
    assert "the form keeps output_dir: taken/output" in page.get_attribute("#launch-new-folder", "title")
    page.click("#launch-new-folder")
    page.wait_for_url("**/runs#run=*", timeout=30_000)
    fresh = service.run(page.url.rsplit("=", 1)[1])
    assert fresh["output_dir"].endswith(f"{fresh['id']}/output")
    page.go_back()
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    assert page.evaluate("window.grpoState().output_dir") == "taken/output"  # nothing in the form was lost


def test_the_address_names_the_run_shown_edits_switch_runs_and_back_goes_to_the_run_before(page, make_service, assets):
    service = make_service()
    first, second, third = (service.launch(run_yaml(assets, max_steps=1, seed=seed))["id"] for seed in (1, 2, 3))
    page.goto(service.url + "/")  # where the user came from
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    open_run(page, service, first)
    page.click(f"tr[data-run-id='{second}']")  # opening a run is a step in the history
    page.wait_for_selector(f"#run-title:text('Run {second}')")
    assert page.url.endswith(f"/runs#run={second}")
    page.go_back()  # Back: the run before, on this page
    page.wait_for_selector(f"#run-title:text('Run {first}')")
    assert page.url.endswith(f"/runs#run={first}")
    page.go_forward()
    page.wait_for_selector(f"#run-title:text('Run {second}')")

    page.evaluate(f"location.hash = '#run={third}'")  # the address edited by hand
    page.wait_for_selector(f"#run-title:text('Run {third}')")
    assert page.get_attribute(f"tr[data-run-id='{third}']", "aria-selected") == "true"
    page.expect_404 = True
    page.evaluate("location.hash = '#run=0123456789ab'")  # a run this service does not have: said, nothing stale
    page.wait_for_function(
        "() => /There is no run 0123456789ab on this service/.test(document.getElementById('notice-text').textContent)"
    )
    assert page.locator("#detail").is_hidden()


def printed_token(service) -> str:
    return re.findall(r"bearer token: (\S+)", service.log_text())[-1]


def test_a_restart_keeps_the_token_and_a_stale_one_is_asked_for_once_never_used(page, tmp_path, assets):
    from tests.support.service import Service, stop_runs

    service = Service(tmp_path / "runs", {"GRPO_WEB_TOKEN": ""})  # as `bash scripts/serve.sh --enable-runs` starts
    try:
        service.start()
        token = printed_token(service)
        assert (tmp_path / "runs" / "token").stat().st_mode & 0o777 == 0o600  # only its user reads it
        assert f"{service.url}/#token={token}" in service.log_text()  # the form's link hands it to the page
        page.goto(f"{service.url}/#token={token}")
        page.wait_for_selector("body[data-ready=true]", timeout=30_000)
        assert "token" not in page.url  # not left in the address bar

        service.stop()  # a restart: the tab keeps its token and the service still takes it
        service.start(service.port)
        assert printed_token(service) == token and "kept in" in service.log_text().split("bearer token:")[-1]
        import_config(page, run_yaml(assets, max_steps=1))
        page.click("#launch-open")
        page.wait_for_function(
            "() => /accepts the token/.test(document.getElementById('launch-token-state').textContent)"
        )
        assert page.input_value("#launch-token") == token
        page.click("#launch-cancel")

        (tmp_path / "runs" / "token").unlink()  # the operator asks for a new token at the next start
        service.stop()
        service.start(service.port)
        fresh = printed_token(service)
        assert fresh != token
        page.click("#launch-open")  # the stale token is found as the dialog opens, cleared and asked for once
        page.wait_for_function(
            "() => /no longer accepts the token this tab had/.test("
            "document.getElementById('launch-token-state').textContent)"
        )
        assert page.input_value("#launch-token") == "" and page.evaluate("document.activeElement.id") == "launch-token"
        assert page.evaluate("sessionStorage.getItem('grpo-runs-token')") is None  # never sent again
        shot(page, "stale-token")
        page.fill("#launch-token", fresh)
        page.click("#launch-apply")
        page.wait_for_url("**/runs#run=*", timeout=30_000)
        assert page.locator("#token-form").is_hidden() and page.locator("#message").is_hidden()
    finally:
        page.goto("about:blank")  # the runs page polls: not a service being stopped
        service.stop()
        stop_runs(tmp_path / "runs")


def test_the_eta_keeps_the_wall_clock_pace_of_steps_that_also_evaluate(page, make_service, assets, tmp_path):
    # evaluation after every step (64 prompts x 4 completions) costs several times the training step, and the
    # runtime's step_time counts the training only
    data = tmp_path / "with-test-split"
    data.mkdir()
    rows = (assets.data / "train.jsonl").read_text()
    (data / "train.jsonl").write_text(rows)
    (data / "test.jsonl").write_text(rows)
    service = make_service()
    run = service.launch(
        run_yaml(
            assets,
            dataset_name=str(data),
            max_steps=40,
            save_steps=100,
            eval_strategy="steps",
            eval_steps=1,
            per_device_eval_batch_size=64,
        )
    )["id"]
    open_run(page, service, run)
    found = re.compile(r"step (\d+) of 40 \(\d+%\), about (\d+) s left")
    page.wait_for_function(
        f"() => {{ const m = /{found.pattern}/.exec("
        "document.getElementById('run-progress-text').textContent); return m && +m[1] >= 8; }",
        timeout=240_000,
    )
    clock = page.evaluate("performance.now()")
    step, eta = map(int, found.search(page.inner_text("#run-progress-text")).groups())
    page.wait_for_function(
        "() => /^step 40 of 40/.test(document.getElementById('run-progress-text').textContent)", timeout=240_000
    )
    took = (page.evaluate("performance.now()") - clock) / 1000
    shot(page, "eta")
    assert 0.5 <= eta / took <= 2, f"at step {step}: about {eta} s left, and the last step came {took:.1f} s later"
    # the list's reward is the last training reward, though the last record is an evaluation's
    done = service.wait_state(run, ("succeeded",), timeout=120)
    assert "eval_reward" in done["metrics"][-1] and "reward" not in done["metrics"][-1]
    last = [record["reward"] for record in done["metrics"] if "reward" in record][-1]
    cell = f"tr[data-run-id='{run}'] td:nth-child(5)"
    page.wait_for_function(f"() => document.querySelector(\"{cell}\").textContent !== ''")
    assert float(page.inner_text(cell)) == pytest.approx(last, rel=1e-2)


def test_completions_are_numbered_as_the_charts_number_steps_and_an_empty_one_says_so(page, make_service, assets):
    service = make_service()
    run = service.launch(run_yaml(assets, max_steps=3, save_steps=10, log_completions=True))["id"]
    done = service.wait_state(run, ("succeeded",), timeout=240)
    path = Path(done["output_dir"]) / "completions.jsonl"
    with path.open("a") as handle:  # a model may answer nothing at all, or only spaces
        for text in ("", "   "):
            handle.write(
                json.dumps(
                    {
                        "step": 2,
                        "prompt": "say nothing",
                        "completion": text,
                        "length": 1,
                        "rewards": {"target_word_reward": 0.0},
                        "truncated": False,
                    }
                )
                + "\n"
            )
    open_run(page, service, run)
    page.wait_for_selector("#completions-list .completion", timeout=30_000)
    charted = sorted({record["step"] for record in done["metrics"] if "reward" in record})
    assert charted == [1, 2, 3]
    options = page.locator("#completions-step option").all_inner_texts()
    assert options == [f"step {step}" for step in charted], options  # the file's 0-2 are the charts' 1-3
    page.wait_for_function("() => /of step 3/.test(document.getElementById('completions-note').textContent)")
    assert page.locator("#completions-list .prompt-label").first.inner_text() == "step 3: prompt"
    empty = page.locator("#completions-list .completion-text[data-empty=true]")
    assert empty.all_inner_texts() == [
        "(empty: no text, the model ended the completion at once)",
        "(only whitespace: 3 characters)",
    ]
    assert all(box["height"] > 5 for box in (empty.nth(0).bounding_box(), empty.nth(1).bounding_box()))
    shot(page, "completions-numbered")

"""One primary button in every state of the form, in headless Chromium against a live service: the page itself
(after a load, with an offer in the notice), and each dialog in each of its states (Import, Export in both dialects,
Command, Saved, Launch: asking for the token, and offering the ways on when the output_dir is another run's; a
question asked before replacing the config). Two filled buttons side by side leave the user to guess which one the
page means; none leaves the user without a next step.

What counts is what the user sees: the visible `button.primary` in the topmost open dialog, or on the page outside
every dialog when none is open."""

from __future__ import annotations

import pytest

from grpo_web.runs.store import Store
from tests.support.configs import LAUNCHABLE
from tests.support.form_page import (  # noqa: F401  (page: the fixture)
    OPEN_R1_TEXT,
    TOKEN,
    import_text,
    offline_runs_server,
    page,
    validations,
    wait_status,
    wait_validated,
)
from tests.support.primary_buttons import primaries

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OWNED = "one-primary-out"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The form's live service, its runs database holding a failed run that wrote OWNED (as a run launched
    offline leaves it, without the seconds a real launch takes)."""
    runs_dir = tmp_path_factory.mktemp("one-primary-runs").resolve()
    (runs_dir / OWNED).mkdir()
    store = Store(runs_dir / "runs.sqlite3")
    store.insert(
        id="0000000000f1",
        state="failed",
        config_text=LAUNCHABLE,
        config_format="yaml",
        world_size=1,
        output_dir=str(runs_dir / OWNED),
        run_dir=str(runs_dir / "0000000000f1"),
    )
    store.close()
    with offline_runs_server(runs_dir) as live:
        yield live


def one_primary(page, state: str) -> str:  # noqa: F811 (a page, not the fixture)
    found = primaries(page)
    assert len(found) == 1, f"{state}: {found}"
    return found[0]


def test_the_page_and_its_notice_offers_have_one_primary_button(page) -> None:  # noqa: F811 (the fixture)
    assert one_primary(page, "the form as it loads") == "export-open"
    import_text(page, OPEN_R1_TEXT)  # the notice offers the open-r1 profile
    assert page.locator("#use-profile-open-r1").is_visible()
    one_primary(page, "an import offering a profile")
    before = validations(page)
    page.select_option("#trl-version", "0.19.1")
    wait_validated(page, before)
    before = validations(page)
    page.select_option("#trl-version", "")  # a newer release: the notice offers to migrate
    wait_validated(page, before)
    page.locator("#migrate-release").wait_for(timeout=15_000)
    one_primary(page, "a release move offering a migration")


def test_each_dialog_has_one_primary_button(page) -> None:  # noqa: F811 (the fixture)
    page.click("#import-open")
    assert one_primary(page, "Import") == "import-apply"
    page.click("#import-cancel")
    page.click("#export-open")
    page.wait_for_function("() => document.getElementById('export-text').value.length > 0")
    assert one_primary(page, "Export, TRL") == "export-download"
    page.select_option("#export-dialect", "verl")
    page.wait_for_function("() => document.getElementById('export-notes').textContent.length > 0")
    assert one_primary(page, "Export, verl") == "export-download"
    page.click("#export-close")
    page.click("#command-open")
    page.wait_for_selector("#command-dialog[open]")
    one_primary(page, "Command")
    page.click("#command-close")
    page.click("#saved-open")
    one_primary(page, "Saved")
    page.click("#saved-close")
    page.click("#launch-open")
    assert one_primary(page, "Launch, asking for the token") == "launch-apply"
    page.click("#launch-cancel")
    import_text(page, "learning_rate: 3.0e-06\n")
    page.select_option("#preset", index=1)  # a recipe over a config with settings: asked first
    page.wait_for_selector("dialog.ask[open]")
    one_primary(page, "the question before a recipe replaces the config")


def test_the_launch_dialog_offering_the_ways_on_has_one_primary_button(page) -> None:  # noqa: F811 (the fixture)
    config = LAUNCHABLE + f"output_dir: {OWNED}\n"
    import_text(page, config)
    wait_status(page, "^Valid")
    page.click("#launch-open")
    page.fill("#launch-token", TOKEN)
    page.expect_offline = True  # the refusal (422) the dialog answers with is logged by the browser too
    page.click("#launch-apply")
    page.wait_for_selector("#launch-resume", timeout=20_000)
    assert one_primary(page, "Launch, the output_dir is another run's") == "launch-new-folder"
    page.click("#launch-overwrite")
    page.wait_for_selector("#overwrite-dialog[open]")
    assert one_primary(page, "the question before an overwrite") == "overwrite-dialog-confirm"
    page.click("#overwrite-dialog-cancel")

"""One primary button in every state of the runs page that has a next step, in headless Chromium against a live
service: the token form, and a finished run's page (resume it when it can be resumed; open the newest run of its line
when it was resumed already; a new run from its config when it trained all its steps). A running run offers no
primary button: Cancel loses work, and nothing else is to be done but watch. The cancel question is a dialog with
one. The runs are seeded in the runs database as the service leaves them (tests/support/run_line.py's line)."""

from __future__ import annotations

import pytest

from tests.support.primary_buttons import primaries
from tests.support.run_line import CHILD, PARENT, seed_line

pytestmark = [pytest.mark.browser]
pytest.importorskip("uvicorn", reason="the service tests need uvicorn")

TOKEN = "one-primary-runs-" + "w" * 20
RESUMABLE = "0000000000e5"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    from tests.support.service import offline_runs_server

    runs_dir = tmp_path_factory.mktemp("one-primary").resolve() / "runs"
    store, _ = seed_line(runs_dir)
    output = runs_dir / "cancelled-output"
    (output / "checkpoint-500").mkdir(parents=True)
    (output / "checkpoint-500" / "runtime_state.json").write_text("{}")
    store.insert(
        id=RESUMABLE,
        state="cancelled",
        config_text="max_steps: 5000\nsave_steps: 500\n",
        config_format="yaml",
        world_size=1,
        output_dir=str(output),
        run_dir=str(runs_dir / RESUMABLE),
    )
    store.add_metrics(RESUMABLE, [{"step": 1, "reward": 0.1}, {"step": 612, "reward": 0.4}], 0, None)
    store.close()
    with offline_runs_server(runs_dir, TOKEN) as live:
        yield live


def primary_of(page, url: str, state: str) -> str:
    page.goto(url)
    run_id = url.rsplit("run=", 1)[1]
    page.wait_for_function("(id) => document.getElementById('run-title').textContent.includes(id)", arg=run_id)
    page.wait_for_selector(f"#run-state[data-state={state}]")
    found = primaries(page)
    assert len(found) == 1, f"{url}: {found}"
    return found[0]


def test_a_finished_run_and_the_token_form_have_one_primary_button(browser, service):
    from tests.support.browser import open_page

    with open_page(browser, viewport={"width": 1366, "height": 900}) as page:
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.goto(f"{service.url}/runs")
        page.wait_for_selector("#token-form", state="visible")
        assert primaries(page) == ["Use token"]
        assert primary_of(page, f"{service.url}/runs#token={TOKEN}&run={RESUMABLE}", "cancelled") == "resume"
        assert primary_of(page, f"{service.url}/runs#run={PARENT}", "cancelled") == "resume-newest"
        assert primary_of(page, f"{service.url}/runs#run={CHILD}", "succeeded") == "edit-in-form"
        assert problems == []

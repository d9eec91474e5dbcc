"""What the runs page says when the service refuses, in headless Chromium against a real `grpo serve
--enable-runs`: a Cancel refused with 409 (the run ended between the page's last poll and the click) stays on
screen through the once-a-second refresh until dismissed; an address naming a run the service does not have is
said once and not asked for again; after the service is started again with a new token, the page says the token
went stale, and an old link's token is said to be from an earlier start. The page's clock is Playwright's, so the
refresh runs exactly when the test says."""

from __future__ import annotations

import pytest

from tests.runs.conftest import TOKEN, run_yaml
from tests.support.runs_page import page  # noqa: F401  (the page fixture: Chromium, no page errors)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
MISSING = "0123456789ab"


def ticks(page, seconds: int) -> None:
    """Let the page's timers run `seconds` of its clock, one second at a time, each poll answered."""
    for _ in range(seconds):
        page.clock.run_for(1000)
        page.wait_for_timeout(150)


def test_refusals_stay_until_dismissed_and_a_missing_run_or_stale_token_is_explained(page, make_service, assets):
    page.expect_404 = page.expect_409 = True  # the missing run's 404 and the refused Cancel's 409 are the point
    service = make_service()
    run = service.launch(run_yaml(assets, max_steps=500, save_steps=500))
    page.clock.install()
    page.goto(f"{service.url}/runs#token={TOKEN}&run={run['id']}")
    page.wait_for_selector("#run-state[data-state=running]", timeout=60_000)
    page.clock.pause_at(page.evaluate("Date.now()") + 50)  # the page polls no more until the test says
    page.click("#cancel")
    page.wait_for_selector("#cancel-dialog[open]")
    with service.client() as client:  # the run ends elsewhere (another tab, the CLI) while the user reads
        assert client.post(f"/api/v1/runs/{run['id']}/cancel").status_code == 202
    service.wait_state(run["id"], ("cancelled",), timeout=60)
    page.click("#cancel-dialog-confirm")
    page.wait_for_selector("#notice:not([hidden])")
    assert "Cancel was refused" in page.inner_text("#notice-text") and "already cancelled" in page.inner_text("#notice")
    ticks(page, 3)  # three refreshes: the run's state is shown, the refusal stays
    assert page.get_attribute("#run-state", "data-state") == "cancelled" and not page.is_enabled("#cancel")
    assert page.is_visible("#notice") and "Cancel was refused" in page.inner_text("#notice-text")
    page.click("#notice-dismiss")
    assert page.is_hidden("#notice")

    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if f"/runs/{MISSING}" in request.url else None)
    page.evaluate(f"location.hash = 'run={MISSING}'")
    page.wait_for_selector("#notice:not([hidden])")
    assert f"There is no run {MISSING}" in page.inner_text("#notice-text")
    ticks(page, 4)
    assert len(asked) == 1, asked  # said once, not polled every second
    assert page.is_hidden("#detail") and page.is_visible("#notice")

    page.evaluate(f"location.hash = 'run={run['id']}'")
    page.wait_for_selector("#run-state[data-state=cancelled]")
    service.stop()  # started again with a new token, on the same port: the open tab's token went stale
    service.env["GRPO_WEB_TOKEN"] = "another-token-" + "y" * 20
    service.start(service.port)
    ticks(page, 2)
    page.wait_for_function("() => /started again with a new one/.test(document.getElementById('message').textContent)")
    assert page.is_visible("#token-form")
    page.goto(f"{service.url}/runs#token={TOKEN}")  # the link printed at the earlier start
    ticks(page, 2)
    page.wait_for_function("() => /earlier start/.test(document.getElementById('message').textContent)")
    message = page.inner_text("#message")
    assert "not the one the service was started with" in message and "earlier start" in message, message

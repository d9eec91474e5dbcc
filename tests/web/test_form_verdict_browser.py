"""One verdict for the whole form, in headless Chromium (Debian's /usr/bin/chromium driven by Playwright; never
`playwright install`): the status banner counts what the memory panel finds on its hardware too, and says so. A
config TRL accepts but that does not fit on the panel's hardware (GRPO-H001) is not "0 errors" above a panel that
says "does not fit"."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import form_page, sync_api_or_skip
from tests.support.configs import BIG, SMALL

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = sync_api_or_skip()


@pytest.fixture
def page(browser, live_server):
    with form_page(browser, live_server.url) as page:
        yield page


def import_yaml(page, text: str) -> None:
    page.click("#import-open")
    page.fill("#import-text", text)
    page.click("#import-apply")
    page.wait_for_selector("#import-dialog", state="hidden")


def wait_fits(page, fits: str) -> None:
    page.wait_for_selector(f"#memory-panel[data-fits='{fits}']", timeout=15_000)


def wait_banner(page, pattern: str) -> None:
    """Until the banner matches `pattern`; a timeout fails with what the banner said instead."""
    try:
        page.wait_for_function(
            "(p) => new RegExp(p).test(document.getElementById('status').textContent)", arg=pattern, timeout=15_000
        )
    except sync_api.TimeoutError:
        pytest.fail(f"the banner never matched {pattern!r}; it says {page.text_content('#status')!r}")


def banner_after_memory(page) -> tuple[str, str]:
    """The banner once it has the memory panel's answer for the config shown (it says 'checking memory' before)."""
    page.wait_for_function(
        "() => !/checking memory/.test(document.getElementById('status').textContent)", timeout=15_000
    )
    return page.get_attribute("#status", "class"), page.text_content("#status")


def test_the_banner_counts_the_memory_panels_error_and_names_it(page):
    import_yaml(page, BIG)  # TRL accepts it (one deprecation warning); 7B with vLLM colocated: 300 GiB per GPU
    wait_fits(page, "false")
    assert page.locator("#memory-diagnostics .diag[data-code='GRPO-H001']").count() == 1
    assert "does not fit" in page.text_content("#memory-summary")
    wait_banner(page, "GRPO-H001")
    klass, text = banner_after_memory(page)
    # One verdict: the config's own diagnostics (one warning) plus the panel's error, the panel named as the source.
    assert "bad" in klass.split() and "ok" not in klass.split(), (klass, text)
    assert text.startswith("Invalid at world size 1: 1 error, 1 warning"), text
    assert re.search(r"1 of them from the memory panel: GRPO-H001 on 8xH100-80GB \(the default hardware\)", text), text
    own_errors = page.locator("#diag-list .diag.error").count()
    panel_errors = page.locator("#memory-diagnostics .diag.error").count()
    assert (own_errors, panel_errors) == (0, 1)

    import_yaml(page, SMALL)  # 0.5B on the same hardware: fits, and the banner says so
    wait_fits(page, "true")
    wait_banner(page, "fits in memory")
    klass, text = banner_after_memory(page)
    assert "ok" in klass.split(), (klass, text)
    assert text.startswith("Valid at world size 1: 0 errors"), text
    assert "fits in memory on 8xH100-80GB" in text and "GRPO-H001" not in text, text


def test_typed_hardware_moves_the_verdict_without_another_edit(page):
    import_yaml(page, SMALL)
    wait_fits(page, "true")
    page.fill("#hardware", "1x4GB")  # a 0.5B model trained in full does not fit in 4 GB
    wait_fits(page, "false")
    wait_banner(page, "GRPO-H001")
    klass, text = banner_after_memory(page)
    assert "bad" in klass.split() and text.startswith("Invalid at world size 1: 1 error"), (klass, text)
    assert "on 1x4GB (typed in the memory panel)" in text, text

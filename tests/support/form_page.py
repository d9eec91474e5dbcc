"""The web form in the run's Chromium (tests/support/browser.py) over a live service in a thread: the `server`
(one per module) and `page` (a fresh context per test, failing on any page error) fixtures and the steps the form
tests share. Screenshots go to test-artifacts/screenshots/form-*.png for a person to look at."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from tests.support import service
from tests.support.browser import sync_api_or_skip
from tests.support.cli import grpo

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"
TOKEN = "form-test-token-" + "y" * 16

pytest.importorskip("fastapi", reason="the form tests need the web extra")
pytest.importorskip("uvicorn", reason="the form tests need uvicorn")
sync_api_or_skip()  # the form tests skip, saying why, without playwright or Chromium

# An open-r1 recipe as people have them: comments everywhere, a key TRL renamed, floats written as 1.0.
OPEN_R1_TEXT = """\
# Model arguments
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
torch_dtype: bfloat16  # renamed to dtype in TRL 1.16

# Data training arguments
dataset_name: open-r1/OpenR1-Math-220k
dataset_prompt_column: problem
system_prompt: "You are a helpful assistant."

# GRPO trainer config
learning_rate: 1.0e-06
num_generations: 8
per_device_train_batch_size: 8
reward_funcs:
- accuracy
- format
reward_weights:
- 1.0
- 1.0
temperature: 1.0  # sampling
max_grad_norm: 0.2
"""


@contextlib.contextmanager
def offline_runs_server(runs_dir, **settings):
    """A live service in a thread with runs on (this module's token), whose launched runs fail at once (offline)."""
    with service.offline_runs_server(runs_dir, TOKEN, **settings) as live:
        yield live


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with offline_runs_server(tmp_path_factory.mktemp("form-runs")) as live:
        yield live


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1366, "height": 800}, accept_downloads=True)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on(
        "console", lambda msg: problems.append(msg.text) if msg.type == "error" and not page.expect_offline else None
    )
    page.expect_offline = False
    page.server = server
    open_form(page)
    yield page
    context.close()
    assert problems == [], problems


def open_form(page) -> None:
    page.goto(page.server.url + "/")
    ready(page)


def ready(page) -> None:
    page.wait_for_selector("body[data-ready=true]", timeout=20_000)


def shots(page, name: str, widths=(800, 1920)) -> None:
    """The page at each width (the height stays), then back to the test's own size."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    for width in widths:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(150)
        page.screenshot(path=str(SHOTS / f"form-{name}-{width}.png"))
    page.set_viewport_size(size)


def one_scroll_at_800(page) -> None:
    """At 800 px the page scrolls as one: no pane is a scroll box of its own."""
    size = page.viewport_size
    page.set_viewport_size({"width": 800, "height": 900})
    page.wait_for_timeout(150)
    boxes = page.evaluate("""() => ['.form-pane', '.side-pane', '.runs-list', '.run-detail']
        .map(s => document.querySelector(s)).filter(Boolean)
        .filter(n => n.scrollHeight > n.clientHeight + 2 && getComputedStyle(n).overflowY !== 'visible')
        .map(n => n.className)""")
    assert boxes == []
    assert page.evaluate("document.documentElement.scrollHeight > window.innerHeight")
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    page.set_viewport_size(size)


def validations(page) -> int:
    return int(page.evaluate("document.body.dataset.validations || 0"))


def wait_validated(page, after: int) -> None:
    page.wait_for_function("(n) => Number(document.body.dataset.validations || 0) > n", arg=after, timeout=15_000)


def wait_status(page, pattern: str) -> None:
    page.wait_for_function(
        "(p) => new RegExp(p).test(document.getElementById('status').textContent)", arg=pattern, timeout=15_000
    )


def state(page) -> dict:
    return page.evaluate("window.grpoState()")


def fill_field(page, name: str, text: str) -> None:
    page.fill("#search", name)
    before = validations(page)
    page.fill(f"#in-{name}", text)
    wait_validated(page, before)
    page.fill("#search", "")


def import_text(page, text: str) -> None:
    before = validations(page)
    page.click("#import-open")
    page.fill("#import-text", text)
    page.click("#import-apply")
    page.wait_for_selector("#import-dialog", state="hidden")
    wait_validated(page, before)


def open_export(page) -> str:
    page.click("#export-open")
    page.wait_for_function("() => document.getElementById('export-text').value.length > 0")
    return page.input_value("#export-text")


def cli_validate(text: str, tmp_path: Path, *options: str) -> dict:
    path = tmp_path / "exported.yaml"
    path.write_text(text)
    done = grpo("validate", "--format", "json", *options, str(path), cwd=ROOT)
    return json.loads(done.stdout)["files"][0]

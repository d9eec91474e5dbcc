"""Fixtures shared by every test folder: the configs inside the repository (examples/ and tests/fixtures/), and
the external reference corpus (../shared) where it is present.

Tests that can only be checked against ../shared (its file counts, its named files) use the `shared_dir` or
`corpus` fixture or the `shared` marker. Without ../shared they are deselected, not skipped, and the run ends with
a line saying how many such comparisons were not made; everything else runs on the repository's own files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.support")  # the shared fixtures' and helpers' asserts explain themselves too

from tests import heavy  # noqa: E402
from tests.support.browser import close_shared_browser  # noqa: E402
from tests.support.fixtures import assets, browser, make_service, playwright_loop_only_in_browser_tests, tiny_model_dir  # noqa: E402,F401  (every folder's fixtures)

# A service with runs on writes the Demo recipe's demo/ into its folder when it starts; the tests' services start in
# the checkout or in folders the tests fill themselves. The test of that start turns it back on for its own service.
os.environ.setdefault("GRPO_WEB_RUNS_PREPARE_DEMO", "0")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "grpo-corpus"
EXAMPLES = REPO / "examples"
FIXTURES = REPO / "tests" / "fixtures"
SHARED_FIXTURES = {"shared_dir", "corpus"}


def corpus_files(kind: str) -> list[Path]:
    """The reference corpus's `valid` or `invalid` files; empty where ../shared is absent."""
    folder = CORPUS / kind
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def repo_files(kind: str) -> list[Path]:
    """The repository's own configs: the example recipes (valid) and the broken fixtures (invalid)."""
    folder = EXAMPLES if kind == "valid" else FIXTURES / "invalid"
    return sorted(folder.glob("*.yaml"))


def conformance_files(kind: str) -> list[Path]:
    """Every config of a kind this checkout has: the repository's own, then the reference corpus's."""
    return repo_files(kind) + corpus_files(kind)


def needs_shared(item: pytest.Item) -> bool:
    return (
        bool(SHARED_FIXTURES & set(getattr(item, "fixturenames", ()))) or item.get_closest_marker("shared") is not None
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "shared: compares against the reference material in ../shared")
    config.addinivalue_line(
        "markers",
        "heavy: one of the slowest end-to-end tests (tests/heavy.py); every run of "
        "the suite runs them, the fast tier leaves them out",
    )


# Folders whose tests share one expensive cluster (a package-scoped fixture): in a parallel run they stay on one worker.
ONE_WORKER_FOLDERS = ("tests/ray/",)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    heavy.mark(config, items, check_entries=SHARED.is_dir())
    heavy.longest_files_first(items)
    for item in items:  # one worker per file (--dist loadgroup): a module's fixtures are built once
        folder = next((name for name in ONE_WORKER_FOLDERS if item.nodeid.startswith(name)), None)
        item.add_marker(pytest.mark.xdist_group(folder or heavy.file_of(item)))
    if SHARED.is_dir():
        return
    left_out = [item for item in items if needs_shared(item)]
    if left_out:
        items[:] = [item for item in items if not needs_shared(item)]
        config.hook.pytest_deselected(items=left_out)
        config.stash[_LEFT_OUT] = len(left_out)


_LEFT_OUT = pytest.StashKey[int]()


def pytest_sessionfinish(session, exitstatus) -> None:
    close_shared_browser()


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    count = config.stash.get(_LEFT_OUT, 0)
    if count:
        terminalreporter.write_line(
            f"{count} comparisons against the reference material were not run: {SHARED} is absent "
            "(they run where the ../shared folder is beside the checkout, as in CI)"
        )


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return SHARED

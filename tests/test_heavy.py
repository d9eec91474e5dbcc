"""tests/heavy.py's check that each entry names a test, in the runs scripts/test.sh makes: the whole suite with
tests/ray left out (it runs on its own afterwards) must collect, and an entry that names nothing still stops it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import heavy

ROOT = Path(__file__).resolve().parents[1]


def collect(*options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_suite_without_tests_ray_collects_as_scripts_test_sh_runs_it():
    if not (ROOT.parent / "shared").is_dir():
        pytest.skip("the entries are checked only where ../shared is present (every test collected)")
    done = collect("--ignore=tests/ray")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "tests/heavy.py names tests that do not exist" not in done.stdout + done.stderr


def test_an_entry_is_left_unchecked_only_under_an_ignored_folder(tmp_path):
    ignored = [(ROOT / "tests" / "ray").resolve()]
    assert heavy.under(ROOT, "tests/ray/test_ray_jobs.py::test_a", ignored)
    assert heavy.under(ROOT, "tests/ray/test_ray_service_browser.py::", ignored)
    assert not heavy.under(ROOT, "tests/runs/test_lifecycle.py::", ignored)
    assert not heavy.under(ROOT, "tests/raytest.py::x", ignored)  # a name that only starts like the folder
    assert not heavy.under(ROOT, "tests/ray/test_ray_jobs.py::test_a", [])

"""Fixtures for the runs tests: a real `grpo serve --enable-runs` subprocess on a free port, a temp runs
directory with its SQLite file, and the run's tiny model and prompt set (nothing is downloaded).

Runs are real: the service starts `grpo launch` (accelerate) in process groups of their own. Every test cleans
up the run processes it caused, even when it fails, so nothing trains on after the suite. The fixtures
(`make_service`, `assets`), the service, the small-run config and the offline environment are tests/support's.
"""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the runs tests need the web extra (pip install -e '.[web]')")

from tests.support.env import OFFLINE_ENV as CHILD_ENV  # noqa: F401  (names tests import)
from tests.support.run_config import TARGET_REWARD, Assets, run_yaml  # noqa: F401
from tests.support.service import TOKEN, Service, stop_runs  # noqa: F401

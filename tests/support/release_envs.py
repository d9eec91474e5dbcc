"""The real TRL releases the oracle tests run: each in its own environment, .venv-trl/<release>
(scripts/trl-release-venvs.sh builds them), TRL 1.16.0 in this interpreter; a missing one skipped, or failed under
CI where scripts/test.sh should have built it."""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What scripts/test.sh builds (scripts/trl-release-venvs.sh with no arguments), and the main .venv's own trl.
BUILT_BY_TEST_SH = ("0.16.1", "0.19.1", "0.23.1", "1.8.0")
MAIN_VENV_RELEASE = "1.16.0"


def interpreter(release: str) -> Path | None:
    """The release's python: .venv-trl/<release> (or $GRPO_TRL_VENVS/<release>, where scripts/trl-release-venvs.sh
    built them elsewhere), or this interpreter for the main .venv's own TRL."""
    venv = Path(os.environ.get("GRPO_TRL_VENVS") or ROOT / ".venv-trl") / release / "bin" / "python"
    if venv.exists():
        return venv
    if release == MAIN_VENV_RELEASE:
        try:
            if importlib.metadata.version("trl") == release:  # metadata only: trl is not imported here
                return Path(sys.executable)
        except importlib.metadata.PackageNotFoundError:
            pass
    return None


def missing(release: str) -> None:
    """Skip, or under CI fail: a release environment scripts/test.sh should have built is not there."""
    why = (
        f".venv-trl/{release} is absent (scripts/trl-release-venvs.sh {release})"
        if release != MAIN_VENV_RELEASE
        else f"trl {release} is not installed in this interpreter (pip install -e '.[test]')"
    )
    expected = release in BUILT_BY_TEST_SH or release == MAIN_VENV_RELEASE
    if os.environ.get("CI") == "true" and expected and os.environ.get("SKIP_TRL_RELEASES") != "1":
        pytest.fail(f"{why}: scripts/test.sh builds it for CI, so its build failed (see the build's log)")
    pytest.skip(why)

"""A copy of this checkout's source, for tests that build it (a wheel, the Action's install).

A build runs setuptools in the source folder and uses its build/ folder. Builds of the one checkout that overlap
(the vLLM environment's editable install runs beside the suite in scripts/test.sh, another worker may build it
too) collide there ("File exists: build/bdist.../grpo_config-X.dist-info"). A fresh copy of the files the checkout
holds is what a user gets, too: GitHub checks an Action out anew, and an sdist unpacks into a clean folder.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO

# Without git (an unpacked sdist): everything but environments, caches and build outputs.
NOT_SOURCE = (
    ".git",
    ".venv*",
    "build",
    "dist",
    "*.egg-info",
    "node_modules",
    "__pycache__",
    ".*_cache",
    "test-artifacts",
)


def copy_checkout(dest: Path) -> Path:
    """The checkout's files (tracked, and new ones git does not ignore) copied to `dest`; `dest`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:
        shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(*NOT_SOURCE), symlinks=True)
        return dest
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO / name
        if source.is_file() or source.is_symlink():  # a file deleted but not yet committed is left out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name, follow_symlinks=False)
    return dest

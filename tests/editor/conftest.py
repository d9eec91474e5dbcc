"""Fixtures of the editor and CI tests: the committed schemas, the real yaml-language-server, check-jsonschema."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.editor.lsp_client import YamlLanguageServer, missing_reason

SCHEMAS = REPO / "schemas"
DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def lsp():
    """One yaml-language-server for all requests of a test module (starting one costs ~0.5 s)."""
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    server = YamlLanguageServer(REPO)
    yield server
    server.close()


def run_check_jsonschema(*args: str) -> subprocess.CompletedProcess:
    """The real check-jsonschema command line (the PyPI package), as CI and pre-commit run it."""
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.skip("check-jsonschema is not installed (pip install 'grpo-config[test]')")
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", *args], capture_output=True, text=True, timeout=120
    )

"""`grpo lsp` started as a real subprocess and driven over stdio, as an editor does (tests/support/lsp.py)."""

from __future__ import annotations

import pytest

from tests.support.lsp import QWEN, apply_edits, line_of, open_text, start_server  # noqa: F401  (import these from tests.support.lsp)


@pytest.fixture(scope="module")
def server():
    """One server for a test module (starting one costs about a second); documents get distinct URIs."""
    client = start_server()
    yield client
    client.close()

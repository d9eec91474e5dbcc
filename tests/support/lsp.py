"""`grpo lsp` started as a real subprocess and driven over stdio, as an editor does, and the edits and positions its
tests read back."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from grpo_schema.engine.lines import split_lines
from tests.conftest import REPO
from tests.editor.lsp_client import StdioLspClient

QWEN = REPO / "tests" / "docs" / "files" / "qwen-grpo.yaml"  # the B001 example of the README
EDITORS_PAGE = REPO / "docs" / "editors.md"


def start_server(initialization_options: Any = None) -> StdioLspClient:
    pytest.importorskip("pygls", reason="grpo lsp needs the lsp extra (pip install 'grpo-config[lsp]')")
    return StdioLspClient(
        [sys.executable, "-m", "grpo_schema", "lsp"],
        REPO,
        timeout=30.0,
        env={"PYTHONPATH": str(REPO)},
        initialization_options=initialization_options,
    )


def apply_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """Apply LSP TextEdits (each against the original text) as an editor does: from the last to the first."""
    lines = split_lines(text, keepends=True)  # as LSP counts lines: \n, \r\n, \r and nothing else
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: dict[str, int]) -> int:
        line = position["line"]
        return starts[min(line, len(lines))] + (position["character"] if line < len(lines) else 0)

    # Inserts at one position appear in the order of the array: apply the later ones first.
    ordered = sorted(
        enumerate(edits),
        reverse=True,
        key=lambda ie: (offset(ie[1]["range"]["start"]), offset(ie[1]["range"]["end"]), ie[0]),
    )
    for _, edit in ordered:
        start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:start] + edit["newText"] + text[end:]
    return text


def line_of(text: str, prefix: str) -> int:
    return next(i for i, line in enumerate(split_lines(text)) if line.startswith(prefix))


def open_text(client: StdioLspClient, tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return client.open(path, text)


def codes(diagnostics) -> list[str]:
    return [d["code"] for d in diagnostics]


def validate(path: Path) -> dict:
    """`grpo validate --format json PATH`'s file object: what the language server's verdict must equal."""
    from tests.support.cli import grpo

    return json.loads(grpo("validate", "--format", "json", str(path), cwd=REPO).stdout)["files"][0]


def snippet(marker: str) -> str:
    """The code block of docs/editors.md marked `<!-- marker -->`."""
    page = EDITORS_PAGE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- {re.escape(marker)} -->\n```\w+\n(.*?)\n```", page, re.S)
    assert found, f"docs/editors.md has no snippet marked {marker}"
    return found.group(1) + "\n"

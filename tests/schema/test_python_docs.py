"""docs/python.md runs as written: every ```python block, in order, in one namespace, in an empty folder."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_examples():
    assert len(blocks()) >= 8


def test_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    has_trl = importlib.util.find_spec("trl") is not None
    ran = 0
    for index, source in enumerate(blocks()):
        if source.startswith("# needs: trl") and not has_trl:
            continue
        try:
            exec(compile(source, f"{DOC.name} block {index + 1}", "exec"), namespace)
        except Exception as exc:  # the failing block, not only the traceback
            pytest.fail(f"{DOC.name} block {index + 1} failed: {exc!r}\n{source}")
        ran += 1
    assert ran >= len(blocks()) - 1
    assert "GRPO-B001" in capsys.readouterr().out

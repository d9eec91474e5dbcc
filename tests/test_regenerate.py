"""Every generated file is what its generator writes now: `python scripts/regenerate.py --check` passes.

One check for the compiled validators, schemas/, docs/runtime-fields.md and docs/architecture.{md,svg}; a stale
file is named with the one command that rebuilds it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _regenerate():
    spec = importlib.util.spec_from_file_location("regenerate", REPO / "scripts" / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_generated_file_is_fresh(capsys):
    pytest.importorskip("grimp", reason="the architecture page is drawn from grimp's graph (the test extra)")
    assert _regenerate().main(["--check"]) == 0, capsys.readouterr().err


def test_a_stale_file_is_named_with_the_command(capsys, monkeypatch, tmp_path):
    regenerate = _regenerate()
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(regenerate, "ROOT", tmp_path)
    monkeypatch.setattr(regenerate, "GENERATED", (("a page", lambda: {page: "new\n"}),))
    assert regenerate.main(["--check"]) == 1
    assert "stale (run python scripts/regenerate.py): docs/page.md" in capsys.readouterr().err
    assert page.read_text(encoding="utf-8") == "old\n"  # --check writes nothing
    assert regenerate.main([]) == 0 and page.read_text(encoding="utf-8") == "new\n"

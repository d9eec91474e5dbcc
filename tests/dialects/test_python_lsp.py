"""The language server's answers on a Python script and a notebook, computed in process (the server's handlers
call these functions with the document's text): diagnostics at the keyword, quick fixes that edit it where it is
written, hover with a keyword's facts and the call's schedule."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("lsprotocol", reason="the language server needs the lsp extra")

from grpo_schema.lsp import python as lsp_python  # noqa: E402
from grpo_schema.lsp.python import check_python_document  # noqa: E402
from grpo_schema.lsp.settings import Settings  # noqa: E402
from tests.support.lsp import apply_edits  # noqa: E402

FILES = Path(__file__).parent / "python_files"


def analysed_text(text: str, name: str, release: str = "0.22.2"):
    return check_python_document(text, Settings(trl_version=release), f"file:///work/{name}")


def analysed(name: str, release: str = "0.22.2"):
    text = (FILES / name).read_text()
    return text, check_python_document(text, Settings(trl_version=release), f"file:///work/{name}")


def test_a_script_gets_the_diagnostics_at_the_keyword_and_fixes_that_edit_it():
    text, analysis = analysed("plain_batch.py")
    (diag,) = analysis.diagnostics
    assert diag.code == "GRPO-B001"
    assert (diag.range.start.line, diag.range.start.character, diag.range.end.character) == (6, 4, 19)
    actions = lsp_python.quick_fixes("file:///work/plain_batch.py", 1, analysis, [diag])
    titles = [a.title for a in actions]
    assert titles[0].startswith("GRPO-B001: per_device_train_batch_size 1 -> 4")
    assert not any("world size" in t for t in titles)  # the launcher's, not a GRPOConfig argument
    edits = [e for changes in actions[0].edit.document_changes for e in changes.edits]
    fixed = apply_edits(
        text,
        [
            {
                "range": {
                    "start": {"line": e.range.start.line, "character": e.range.start.character},
                    "end": {"line": e.range.end.line, "character": e.range.end.character},
                },
                "newText": e.new_text,
            }
            for e in edits
        ],
    )
    assert "    per_device_train_batch_size=4,\n" in fixed and fixed.count("\n") == text.count("\n")
    again = check_python_document(fixed, Settings(trl_version="0.22.2"), "file:///work/plain_batch.py")
    assert again.diagnostics == []


def test_hover_shows_a_keywords_facts_and_the_calls_schedule():
    _, analysis = analysed("unsloth_batch.py")
    on_keyword = lsp_python.hover(analysis, 7, 8)  # num_generations=4
    assert on_keyword.startswith("**num_generations** (TRL 0.22.2)")
    on_call = lsp_python.hover(analysis, 3, 9)  # args = GRPOConfig(
    assert "**Schedule at world size 1**" in on_call and "| 4 |" in on_call  # the batch Unsloth trains with
    assert lsp_python.hover(analysis, 0, 3) is None  # outside any call


def test_a_notebook_gets_its_diagnostics_on_the_json_line_of_the_cells_line():
    text, analysis = analysed("notebook.ipynb")
    lines = text.splitlines()
    found = {d.code: d for d in analysis.diagnostics}
    batch = found["GRPO-B001"]
    assert batch.message.startswith("cell 5 line 5: ")
    assert "num_generations=8" in lines[batch.range.start.line]
    assert lines[batch.range.start.line][batch.range.start.character :].startswith("num_generations")
    assert "def broken(" in lines[found["GRPO-F001"].range.start.line]
    actions = lsp_python.quick_fixes("file:///work/notebook.ipynb", 1, analysis, [batch])
    chosen = next(a for a in actions if a.title.startswith("GRPO-B001: per_device_train_batch_size 2 -> 8"))
    edits = [e for changes in chosen.edit.document_changes for e in changes.edits]
    fixed = apply_edits(
        text,
        [
            {
                "range": {
                    "start": {"line": e.range.start.line, "character": e.range.start.character},
                    "end": {"line": e.range.end.line, "character": e.range.end.character},
                },
                "newText": e.new_text,
            }
            for e in edits
        ],
    )
    import json

    cell = "".join(json.loads(fixed)["cells"][5]["source"])
    assert "    per_device_train_batch_size=8,\n" in cell and fixed.count("\n") == text.count("\n")
    assert not any(d.code == "GRPO-B001" for d in analysed_text(fixed, "notebook.ipynb").diagnostics)


def test_a_python_file_without_a_call_gets_nothing_in_the_editor():
    assert analysed_text("import os\nprint(os.getcwd())\n", "util.py").diagnostics == []
    assert (
        analysed_text(
            "from trl import GRPOConfig, HfArgumentParser\nHfArgumentParser(GRPOConfig)\n", "cli.py"
        ).diagnostics
        == []
    )

"""Lines as editors count them, on every surface: U+2028, U+2029 and U+0085 (prompts pasted from web pages or JSON,
a cp1252 ellipsis read as Latin-1) end no line for `grpo validate`, the language server or a quick fix, so an edit
lands where the user typed it and a fix saves the file it shows. Also the server's guard on a message's size, and a
file that is not UTF-8 judged the same in the editor as on the command line."""

from __future__ import annotations

import re

import pytest
import yaml

from grpo_schema import check_text
from grpo_schema.cli import main
from grpo_schema.engine.lines import split_lines
from grpo_schema.engine.loader import load_yaml
from tests.lsp_server.conftest import apply_edits, open_text

BREAKS = ["\u2028", "\u2029", "\x85"]


def config(odd: str) -> str:
    return (
        "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\n"
        f'run_name: "think{odd}then answer"\n'
        "# a comment\n"
        "dataset_name: trl-lib/tldr\n"
        "per_device_train_batch_size: 4\n"
        "num_generations: 4\n"
    )


@pytest.mark.parametrize("odd", BREAKS, ids=["U+2028", "U+2029", "U+0085"])
def test_validate_reports_the_line_the_editor_shows(odd, tmp_path, capsys):
    path = tmp_path / "odd.yaml"
    path.write_text(config(odd).replace("num_generations: 4", "num_generations: 6"), encoding="utf-8")
    main(["validate", str(path)])
    out = capsys.readouterr().out
    assert f"{path}:6:1: error[GRPO-B001]" in out, out  # num_generations is on the file's 6th line
    loaded = load_yaml(config(odd))
    assert loaded.positions.keys[("num_generations",)] == (6, 1)
    assert loaded.data == yaml.safe_load(config(odd))  # the values are YAML 1.1's, as trl reads them


@pytest.mark.parametrize("odd", BREAKS, ids=["U+2028", "U+2029", "U+0085"])
def test_a_break_that_yaml_alone_sees_is_named_where_the_editor_shows_it(odd):
    found = load_yaml(f"a: 1\n# a comment with {odd} in it\nb: 2\n").diagnostics
    assert [(d.code, d.line, d.column) for d in found] == [("GRPO-Y001", 2, 20)]
    assert "YAML 1.1" in found[0].hint and f"U+{ord(odd):04X}" in found[0].hint


def test_a_lone_carriage_return_ends_a_line_as_in_lsp():
    assert load_yaml("a: 1\rb: 2\r\nc: 3\n").positions.keys[("c",)] == (3, 1)
    assert split_lines("a\rb\r\nc\u2028d\x0ce\n") == ["a", "b", "c\u2028d\x0ce"]


@pytest.mark.parametrize("odd", BREAKS, ids=["U+2028", "U+2029", "U+0085"])
def test_an_edit_and_its_quick_fix_land_on_the_lines_the_editor_shows(server, tmp_path, odd):
    text = config(odd)
    uri = open_text(server, tmp_path, f"odd-{ord(odd):x}.yaml", text)
    assert "GRPO-B001" not in [d["code"] for d in server.wait_publish(uri, 1)]
    # The user types 6 over the 4 of per_device_train_batch_size (line 4, 0-based): the server's copy must agree.
    edit = {"range": {"start": {"line": 4, "character": 29}, "end": {"line": 4, "character": 30}}, "newText": "6"}
    version = server.change(uri, "6", edit["range"])
    text = apply_edits(text, [edit])
    b001 = [d for d in server.wait_publish(uri, version) if d["code"] == "GRPO-B001"]
    assert [d["range"]["start"]["line"] for d in b001] == [5], b001
    assert server.hover(uri, 4, 3).startswith("**per_device_train_batch_size**")
    actions = server.code_actions(uri, (5, 0), (5, 3))
    fix = next(a for a in actions if a["title"].startswith("GRPO-B001") and "num_generations" in a["title"])
    fixed = apply_edits(text, fix["edit"]["changes"][uri])
    assert split_lines(fixed)[1:] == [
        f'run_name: "think{odd}then answer"',
        "# a comment",
        "dataset_name: trl-lib/tldr",
        "per_device_train_batch_size: 6",
        split_lines(fixed)[-1],
    ]
    assert re.fullmatch(r"num_generations: \d+", split_lines(fixed)[-1]) and "GRPO-B001" not in {
        d.code for d in check_text(fixed).diagnostics
    }


def test_an_oversized_content_length_is_refused_and_the_server_serves_on(server, tmp_path):
    answer = server.send_bytes(b"Content-Length: 1000000000000\r\n\r\n")  # 10**12 bytes announced, none sent
    assert answer["error"]["code"] == -32600 and "1000000000000" in answer["error"]["message"]
    uri = open_text(server, tmp_path, "after-oversized.yaml", config("\u2028"))
    assert server.hover(uri, 5, 2).startswith("**num_generations**")


def test_a_latin1_file_is_the_same_error_in_the_editor_as_in_the_cli(server, tmp_path, capsys):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(config("").encode().replace(b"think", b"caf\xe9"))
    main(["validate", str(path)])
    out = capsys.readouterr().out
    assert f"{path}:2:15: error[GRPO-Y011]" in out, out
    uri = server.open(path, path.read_bytes().decode("latin-1"))  # as an editor that guessed Latin-1 shows it
    found = server.wait_publish(uri, 1)
    assert [(d["code"], d["range"]["start"]) for d in found] == [("GRPO-Y011", {"line": 1, "character": 14})]

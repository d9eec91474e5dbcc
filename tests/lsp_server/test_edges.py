"""The ends of a file and of the protocol: a fix that adds a key edits inside the file (no position past the last
line, so Neovim 0.11 leaves no blank line), a syntax error at the end is on the last line (CLI and server), and a
request whose parameters cannot be read gets InvalidParams (-32602) instead of no answer."""

from __future__ import annotations

import pytest

from grpo_schema.engine.validate import check_text
from tests.editor.lsp_client import LspError
from tests.support.lsp import apply_edits, line_of, open_text

CONFIG = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/DeepMath-103K\n"
    "reward_funcs: [accuracy_reward]\nper_device_train_batch_size: 4\nnum_generations: 6\n"
)


@pytest.mark.parametrize("ending", ["\n", "", "\r\n"], ids=["newline", "no-newline", "crlf"])
def test_a_fix_that_adds_a_key_edits_within_the_file(server, tmp_path, ending):
    text = CONFIG.replace("\n", ending) if ending != "" else CONFIG.rstrip("\n")
    uri = open_text(server, tmp_path, f"add-{len(ending)}.yaml", text)
    server.wait_publish(uri)
    line = line_of(text, "num_generations")
    action = next(a for a in server.code_actions(uri, (line, 0), (line, 3)) if "steps_per_generation" in a["title"])
    edits = action["edit"]["changes"][uri]
    last = len(text.splitlines()) - 1
    assert all(e["range"]["end"]["line"] <= last for e in edits), edits  # nothing past the last line
    fixed = apply_edits(text, edits)
    assert "steps_per_generation: 3" in fixed and not fixed.endswith(("\n\n", "\r\n\r\n"))
    assert check_text(fixed).valid


def test_a_syntax_error_at_the_end_is_on_the_last_line(server, tmp_path):
    for text in (
        "num_generations: 8\nbeta: [0.1\n",
        "num_generations: 8\nbeta: [0.1",
        'num_generations: 8\nbeta: "x\n',
    ):
        engine = next(d for d in check_text(text).diagnostics if d.code == "GRPO-Y001")
        assert engine.line == len(text.splitlines()), text  # what `grpo validate` prints
        uri = open_text(server, tmp_path, f"end-{len(text)}.yaml", text)
        found = next(d for d in server.wait_publish(uri) if d["code"] == "GRPO-Y001")
        assert found["range"]["start"]["line"] == len(text.splitlines()) - 1


def test_unreadable_params_get_invalid_params_and_the_server_keeps_serving(server, tmp_path):
    for method, params in (
        ("textDocument/hover", {"textDocument": 5}),
        ("textDocument/codeAction", {"x": 1}),
        ("textDocument/completion", None),
    ):
        with pytest.raises(LspError, match="-32602"):
            server.request(method, params)
    uri = open_text(server, tmp_path, "after.yaml", CONFIG)
    server.wait_publish(uri)
    assert server.hover(uri, 4, 2).startswith("**num_generations**")


def test_completion_on_a_file_never_opened_answers_null_like_hover(server, tmp_path):
    uri = (tmp_path / "never-opened.yaml").as_uri()  # not on disk either: the server must not read it
    position = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
    assert server.request("textDocument/completion", position) is None
    assert server.request("textDocument/hover", position) is None
    opened = open_text(server, tmp_path, "opened.yaml", CONFIG)
    server.wait_publish(opened)
    assert server.hover(opened, 4, 2).startswith("**num_generations**")

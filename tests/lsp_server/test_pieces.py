"""The pure parts of `grpo lsp`: minimal text edits, the `# grpo:` comment and the client's settings."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("lsprotocol", reason="grpo lsp needs the lsp extra (pip install 'grpo-config[lsp]')")

from grpo_schema.engine.infile import read_file_settings  # noqa: E402
from grpo_schema.lsp.edits import text_edits  # noqa: E402
from grpo_schema.lsp.settings import Settings, from_client  # noqa: E402
from tests.support.lsp import apply_edits  # noqa: E402


def edits_as_dicts(old: str, new: str) -> list[dict]:
    return [
        {
            "range": {
                "start": {"line": e.range.start.line, "character": e.range.start.character},
                "end": {"line": e.range.end.line, "character": e.range.end.character},
            },
            "newText": e.new_text,
        }
        for e in text_edits(old, new)
    ]


@pytest.mark.parametrize(
    "old,new,count",
    [
        ("a: 1\nb: 2  # keep\nc: 3\n", "a: 1\nb: 20  # keep\nc: 3\n", 1),
        ("a: 1\ntorch_dtype: x  # c\nmax_prompt_length: 5\nz: 1\n", "a: 1\ndtype: x  # c\nz: 1\n", 2),
        ("a: 1\nb: 2", "a: 1\nb: 2\nc: 3\n", 2),  # after a last line without a newline: two inserts
        ("a: 1\r\nb: 2\r\n", "a: 1\r\nb: 3\r\n", 1),
        ("x: [😀, 1]\n", "x: [😀, 2]\n", 1),
    ],
)
def test_text_edits_are_small_and_reproduce_the_new_text(old, new, count):
    edits = edits_as_dicts(old, new)
    assert len(edits) == count
    if "😀" not in old:  # apply_edits counts code points; LSP columns are UTF-16 units
        assert apply_edits(old, edits) == new
    assert sum(len(e["newText"]) for e in edits) < len(new)


def test_text_edits_reproduce_random_line_edits():
    rng = random.Random(7)
    for _ in range(400):
        old_lines = [f"key{i}: {rng.randint(0, 99)}\n" for i in range(rng.randint(1, 12))]
        new_lines = list(old_lines)
        for _ in range(rng.randint(1, 3)):
            kind = rng.choice("sid")
            index = rng.randrange(len(new_lines) + (kind == "i"))
            if kind == "s" and index < len(new_lines):
                new_lines[index] = new_lines[index].replace(":", ": 1", 1)
            elif kind == "i":
                new_lines.insert(index, f"new{index}: x\n")
            elif len(new_lines) > 1 and index < len(new_lines):
                del new_lines[index]
        old, new = "".join(old_lines), "".join(new_lines)
        if rng.random() < 0.3:  # a file whose last line has no newline
            old = old.rstrip("\n")
        if rng.random() < 0.3:
            new = new.rstrip("\n")
        edits = edits_as_dicts(old, new)
        assert apply_edits(old, edits) == new
        spans = [
            (
                e["range"]["start"]["line"],
                e["range"]["start"]["character"],
                e["range"]["end"]["line"],
                e["range"]["end"]["character"],
            )
            for e in edits
        ]
        assert all(a[2:] <= b[:2] for a, b in zip(spans, spans[1:]))  # in order, never overlapping (LSP's rule)


def test_the_grpo_comment_takes_validate_options_and_reports_bad_ones():
    text = "# grpo: --world-size 8\nbeta: 0.0\n  # grpo: --profile open-r1 --allow-env LD_PRELOAD\n# grpo: --nope\n"
    found = read_file_settings(text)  # the engine's reading, the one `grpo validate` uses (1-based lines)
    assert found.world_size == 8 and found.profiles == ("open-r1",)
    assert found.allow_env == ("LD_PRELOAD",) and found.lines == (1, 3, 4)
    assert [(p.line, "unrecognized arguments: --nope" in p.message) for p in found.problems] == [(4, True)]
    assert read_file_settings("a: 1  # grpo: --world-size 8\n").world_size is None  # only whole lines


def test_client_settings_read_the_grpo_section_and_ignore_ill_typed_values():
    base = from_client({"grpo": {"worldSize": 4, "profiles": ["open-r1"], "hardware": "8xH100-80GB", "debounceMs": 25}})
    assert (base.world_size, base.profiles, base.hardware, base.debounce_ms) == (4, ("open-r1",), "8xH100-80GB", 25)
    same = from_client({"grpo": {"worldSize": "eight", "profiles": 3, "debounceMs": -1}}, base)
    assert same == base
    assert from_client({"worldSize": 2}).world_size == 2  # the section itself, as some clients send it
    assert from_client(None, base) == base


def test_every_setting_of_the_vscode_extension_is_read_by_the_server():
    import json

    from tests.conftest import REPO

    manifest = json.loads((REPO / "editors" / "vscode" / "package.json").read_text())
    properties = manifest["contributes"]["configuration"]["properties"]
    samples = {
        "worldSize": 8,
        "profiles": ["open-r1"],
        "hardware": "8xH100-80GB",
        "allowEnv": ["HF_TOKEN"],
        "debounceMs": 40,
        "trlVersion": "0.19",
    }
    client_side = {
        "command",
        "files",
    }  # the extension's own: it starts the server, and picks files (sent as filePatterns)
    assert {name.split(".", 1)[1] for name in properties} == set(samples) | client_side
    for key, value in samples.items():
        assert from_client({"grpo": {key: value}}) != Settings(), key

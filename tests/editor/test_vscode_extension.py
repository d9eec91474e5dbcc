"""The VS Code extension as shipped (editors/vscode): every setting it contributes reaches `grpo lsp` (the
extension's settings() reads each one), its default file patterns are the server's own and the ones
docs/editors.md names, and a release the server cannot use is refused by the setting's own schema too."""

from __future__ import annotations

import json
import re

from grpo_schema.lsp.settings import DEFAULT_FILE_PATTERNS
from tests.conftest import REPO

FOLDER = REPO / "editors" / "vscode"
PACKAGE = json.loads((FOLDER / "package.json").read_text())
EXTENSION = (FOLDER / "extension.js").read_text()
PROPERTIES = PACKAGE["contributes"]["configuration"]["properties"]


def test_every_setting_is_sent_to_the_server():
    sent = set(re.findall(r'config\.get\("(\w+)"\)', EXTENSION.split("function activate", 1)[0]))
    assert {name.removeprefix("grpo.") for name in PROPERTIES} - {"command"} == sent
    assert "trlVersion: config.get(\"trlVersion\")" in EXTENSION and "filePatterns: config.get(\"files\")" in EXTENSION


def test_the_default_file_patterns_are_the_servers_and_the_docs():
    files = PROPERTIES["grpo.files"]["default"]
    # a pattern without "/" is a file name to the server: "**/" + it in VS Code's globs
    assert files == [p if "/" in p else f"**/{p}" for p in DEFAULT_FILE_PATTERNS]
    docs = (REPO / "docs" / "editors.md").read_text()
    assert "default " + ", ".join(f"`{p}`" for p in files) in docs.replace("\n", " ")


def test_the_release_setting_accepts_releases_only():
    pattern = re.compile(PROPERTIES["grpo.trlVersion"]["pattern"])
    assert all(pattern.match(v) for v in ("1.16", "0.19.1", "v1.8"))
    assert not any(pattern.match(v) for v in ("banana", "1", "latest"))

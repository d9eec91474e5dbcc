"""The VS Code extension as shipped (editors/vscode): every setting it contributes reaches `grpo lsp` (the
extension's settings() reads each one), its default file patterns are the server's own and the ones
docs/editors.md names, and a release the server cannot use is refused by the setting's own schema too."""

from __future__ import annotations

import json
import re
import time

import pytest

from grpo_schema.lsp.settings import DEFAULT_FILE_PATTERNS
from tests.conftest import REPO

FOLDER = REPO / "editors" / "vscode"
PACKAGE = json.loads((FOLDER / "package.json").read_text())
EXTENSION = (FOLDER / "extension.js").read_text()
PROPERTIES = PACKAGE["contributes"]["configuration"]["properties"]


def test_every_setting_is_sent_to_the_server():
    sent = set(re.findall(r'config\.get\("(\w+)"\)', EXTENSION.split("function activate", 1)[0]))
    assert {name.removeprefix("grpo.") for name in PROPERTIES} - {"command"} == sent
    assert 'trlVersion: config.get("trlVersion")' in EXTENSION and 'filePatterns: config.get("files")' in EXTENSION


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


@pytest.mark.slow  # a language server's start and two settled publishes: 5-8 s
def test_a_change_of_grpo_files_reaches_the_server_in_the_shape_vs_code_sends_it(tmp_path):
    """vscode-languageclient's synchronize.configurationSection sends the `grpo` section as VS Code holds it (`files`,
    not the `filePatterns` of the first message): a folder added to grpo.files is checked from then on."""
    from tests.support.lsp import open_text, start_server

    defaults = {name.removeprefix("grpo."): spec.get("default") for name, spec in PROPERTIES.items()}
    first = {key: value for key, value in defaults.items() if key not in ("command", "files")}
    client = start_server({"grpo": {**first, "filePatterns": defaults["files"]}})  # the extension's settings()
    try:
        (tmp_path / "configs").mkdir()
        uri = open_text(client, tmp_path, "configs/run.yaml", "lerning_rate: 1.0e-6\nnum_generatons: 8\n")
        assert client.wait_diagnostics(uri) == []  # two unknown keys, outside grpo.files: not a config to check
        client.notify(
            "workspace/didChangeConfiguration",
            {"settings": {"grpo": {**defaults, "files": [*defaults["files"], "**/configs/*.yaml"]}}},
        )
        deadline = time.monotonic() + 20
        while not client.diagnostics.get(uri) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.diagnostics.get(uri), "the folder added to grpo.files is not checked"
    finally:
        client.close()
    # the client's own document selector is fixed at its start: the extension asks for a reload when it changes
    assert 'affectsConfiguration("grpo.files")' in EXTENSION and "workbench.action.reloadWindow" in EXTENSION

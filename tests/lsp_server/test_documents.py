"""`grpo lsp` in an editor that attaches it to every YAML file: only GRPO configs are checked (a modeline, a file
pattern, or GRPO keys), everything else gets an empty publish; and what it says about a config is what
`grpo validate` says, at the world size the file declares, whatever the editor's defaults."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.lsp import codes, start_server, validate

WORKFLOW = (
    "name: CI\non:\n  push:\n    branches: [main]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    "    steps:\n      - uses: actions/checkout@v4\n"
)
COMPOSE = "services:\n  web:\n    image: nginx\n    ports: ['80:80']\nvolumes:\n  data: {}\n"
CONFIG = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: trl-lib/DeepMath-103K\n"
    "reward_funcs: [accuracy_reward]\nper_device_train_batch_size: 4\nnum_generations: 6\n"
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def editor():
    """A server started with what an editor's user might set (the old documented defaults)."""
    client = start_server(initialization_options={"grpo": {"worldSize": 8, "profiles": ["open-r1"]}})
    yield client
    client.close()


def test_a_workflow_a_compose_file_and_action_yml_get_nothing(server, tmp_path):
    for path in (
        write(tmp_path, ".github/workflows/ci.yml", WORKFLOW),
        write(tmp_path, "docker-compose.yml", COMPOSE),
        REPO / "action.yml",
    ):
        uri = server.open(path)
        assert server.wait_publish(uri) == [], path
        assert server.hover(uri, 0, 1) == ""
        assert server.code_actions(uri, (0, 0), (0, 3)) == []


def test_a_config_is_recognised_by_modeline_pattern_or_keys(server, tmp_path):
    odd = "name: x\nfoo: 1\n"  # not a config by its keys: checked only when something else says it is one
    assert server.wait_publish(server.open(write(tmp_path, "plain.yaml", odd))) == []
    assert "GRPO-K001" in codes(server.wait_publish(server.open(write(tmp_path, "run.grpo.yaml", odd))))
    assert "GRPO-K001" in codes(server.wait_publish(server.open(write(tmp_path, "recipes/a/b.yaml", odd))))
    modeline = "# yaml-language-server: $schema=../schemas/grpo-config.schema.json\n" + odd
    assert "GRPO-K001" in codes(server.wait_publish(server.open(write(tmp_path, "m.yaml", modeline))))
    other = "# yaml-language-server: $schema=https://json.schemastore.org/github-workflow.json\n"
    assert server.wait_publish(server.open(write(tmp_path, "w.yml", other + odd))) == []
    # GRPO-only keys outrank a modeline naming another schema (the form's download names the service's URL)
    assert "GRPO-B001" in codes(server.wait_publish(server.open(write(tmp_path, "w2.yml", other + CONFIG))))
    served = "# yaml-language-server: $schema=http://127.0.0.1:8000/api/v1/schema\n" + odd
    assert "GRPO-K001" in codes(server.wait_publish(server.open(write(tmp_path, "dl.yaml", served))))
    assert "GRPO-K001" in codes(server.wait_publish(server.open(write(tmp_path, "c.yaml", "# grpo:\n" + odd))))
    by_keys = server.wait_publish(server.open(write(tmp_path, "mine.yaml", CONFIG + "typo_key: 1\n")))
    assert "GRPO-K001" in codes(by_keys)  # GRPO keys, one typo: a config with a problem


def test_file_patterns_come_from_the_settings(tmp_path):
    client = start_server(initialization_options={"grpo": {"filePatterns": ["configs/*.yml"]}})
    try:
        odd = "name: x\nfoo: 1\n"
        assert "GRPO-K001" in codes(client.wait_publish(client.open(write(tmp_path, "configs/a.yml", odd))))
        assert client.wait_publish(client.open(write(tmp_path, "b.grpo.yaml", odd))) == []  # replaced the defaults
    finally:
        client.close()


def test_the_server_and_validate_agree_on_a_grpo_comment(server, tmp_path):
    path = write(tmp_path, "ws.yaml", "# grpo: --world-size 8\n" + CONFIG)
    found = server.wait_publish(server.open(path))
    cli = validate(path)
    assert cli["world_size"] == 8 and cli["world_size_source"] == "comment"
    assert codes(found) == [d["code"] for d in cli["diagnostics"]] and "GRPO-B001" in codes(found)


def test_a_files_declared_world_size_wins_over_the_editor_default(editor, tmp_path):
    # (The editor's open-r1 profile applies to these files, which name none: compare without its R002.)
    path = write(
        tmp_path, "np.yaml", CONFIG.replace("num_generations: 6", "num_generations: 16") + "num_processes: 4\n"
    )
    uri = editor.open(path)
    found = editor.wait_publish(uri)  # 4 x 4 = 16: one group at 4; at the editor's 8 it would be fine too, so:
    assert sorted(codes(found)) == sorted([d["code"] for d in validate(path)["diagnostics"]] + ["GRPO-R002"])
    assert "**Schedule at world size 4** (num_processes in the file)" in editor.hover(uri, 4, 2)
    at_3 = write(tmp_path, "np3.yaml", CONFIG + "num_processes: 3\n")  # valid at 3, B001 at the editor's 8
    assert "GRPO-B001" not in codes(editor.wait_publish(editor.open(at_3)))
    undeclared = write(tmp_path, "none.yaml", CONFIG)  # declares nothing: the editor's default applies, and says so
    uri = editor.open(undeclared)
    assert "GRPO-B001" in codes(editor.wait_publish(uri))
    assert "(the editor's settings (the file declares none))" in editor.hover(uri, 4, 2)


def test_the_documented_neovim_setup_changes_no_verdict(tmp_path):
    """The Neovim snippets of docs/editors.md (run in Neovim by tests/editor/test_editor_docs.py) set no default
    that changes a verdict: with their init_options the project's examples get what validate says."""
    from tests.support.lsp import snippet

    blocks = [snippet("neovim-0.7"), snippet("neovim-0.11")]
    for block in blocks:
        assert not re.search(r"worldSize|profiles\s*=", block), "the snippet must not set verdict-changing defaults"
    options = {"grpo": {}} if all("init_options = { grpo = {} }" in block for block in blocks) else None
    client = start_server(initialization_options=options)
    try:
        for name in ("dapo.yaml", "grpo.yaml", "open-r1.yaml"):
            path = REPO / "examples" / name
            found = client.wait_publish(client.open(path))
            assert codes(found) == [d["code"] for d in validate(path)["diagnostics"]], name
        assert "GRPO-R002" not in codes(client.wait_publish(client.open(REPO / "examples" / "dapo.yaml")))
    finally:
        client.close()

"""The real yaml-language-server (npm) over LSP, against the committed schema, on YAML files with our modeline.

What a user of VS Code, Neovim or JetBrains with the YAML plugin sees: completion of keys and values with our
descriptions, hover text, and diagnostics on the right lines.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from grpo_schema.engine.params.loss import LOSS_TYPE_DOCS, LOSS_TYPES
from tests.conftest import REPO
from tests.editor.conftest import DATA, SCHEMAS
from tests.support.cli import grpo

COMPLETE = DATA / "complete.grpo.yaml"
MISTAKES = DATA / "mistakes.grpo.yaml"


def line_of(path: Path, prefix: str) -> int:
    """0-based line of the first line starting with `prefix`."""
    return next(i for i, line in enumerate(path.read_text().splitlines()) if line.startswith(prefix))


def documentation(item: dict) -> str:
    doc = item.get("documentation") or ""
    return doc.get("value", "") if isinstance(doc, dict) else doc


def test_the_modeline_associates_the_committed_schema(lsp):
    uri = lsp.open(COMPLETE)
    assert lsp.schemas_applied(uri) == [(SCHEMAS / "grpo-config.schema.json").resolve().as_uri()]


def test_completion_at_an_empty_key_lists_grpo_fields_with_descriptions(lsp):
    uri = lsp.open(COMPLETE)
    items = {item["label"]: item for item in lsp.complete(uri, line_of(COMPLETE, "loss_type") + 1, 0)}
    for name in ("per_device_train_batch_size", "beta", "epsilon_high", "use_vllm", "learning_rate", "env"):
        assert name in items, f"{name} not offered"
    assert "num_generations" not in items and "loss_type" not in items  # already in the file
    assert "max_prompt_length" not in items  # removed keys are not offered
    assert "vllm_importance_sampling_cap" not in items  # nor deprecated ones
    assert documentation(items["beta"]).startswith("Weight of the KL penalty against the reference model")
    assert len(items) > 200


def test_completion_after_loss_type_lists_every_loss_type_with_its_doc(lsp):
    uri = lsp.open(COMPLETE)
    line = line_of(COMPLETE, "loss_type")
    items = lsp.complete(uri, line, len("loss_type: "))
    assert [item["label"] for item in items] == list(LOSS_TYPES)
    for item in items:
        assert LOSS_TYPE_DOCS[item["label"]] in documentation(item)


def test_hover_on_num_generations_shows_our_description(lsp):
    uri = lsp.open(COMPLETE)
    text = lsp.hover(uri, line_of(COMPLETE, "num_generations"), 3)
    assert "Completions sampled per prompt: the GRPO group size G." in text
    assert "**Range:** ≥ 2" in text and "GRPO-B001" in text


def test_diagnostics_flag_each_mistake_on_its_line(lsp):
    uri = lsp.open(MISTAKES)
    found = [(d["range"]["start"]["line"], d["message"]) for d in lsp.wait_diagnostics(uri)]

    def messages_on(prefix: str) -> list[str]:
        return [message for line, message in found if line == line_of(MISTAKES, prefix)]

    assert messages_on("num_generaions") == ["Property num_generaions is not allowed."]
    assert messages_on("temperature") == ["Value is below the exclusive minimum of 0."]
    assert any("deprecated" in m and "GRPO-D001" in m for m in messages_on("vllm_importance_sampling_cap"))
    assert any("removed in TRL 0.28" in m for m in messages_on("max_prompt_length"))
    assert messages_on("bf16") == ["fp16 and bf16 cannot both be true (GRPO-P001)"]
    flagged = {line for line, _ in found}
    assert flagged == {
        line_of(MISTAKES, key)
        for key in ("num_generaions", "temperature", "vllm_importance_sampling_cap", "max_prompt_length", "bf16")
    }


def test_a_file_written_with_our_modeline_gets_the_schema(lsp, tmp_path):
    from grpo_schema.commands.export import with_modeline

    schema = tmp_path / "grpo-config.schema.json"
    schema.write_bytes((SCHEMAS / "grpo-config.schema.json").read_bytes())
    config = tmp_path / "run.yaml"
    config.write_text(with_modeline("num_generations: 1\n", "./grpo-config.schema.json"))
    uri = lsp.open(config)
    assert lsp.schemas_applied(uri) == [schema.resolve().as_uri()]
    assert [d["range"]["start"]["line"] for d in lsp.wait_diagnostics(uri)] == [1]


def test_an_empty_file_offers_the_recipe_snippets(lsp, tmp_path):
    from grpo_schema.schema_export.snippets import RECIPES

    config = tmp_path / "new.grpo.yaml"
    config.write_text(f"# yaml-language-server: $schema={(SCHEMAS / 'grpo-config.schema.json').as_uri()}\n\n")
    labels = [item["label"] for item in lsp.complete(lsp.open(config), 1, 0)]
    assert [label for label, _, _ in RECIPES] == [
        label for label in labels if label in dict.fromkeys(label for label, _, _ in RECIPES)
    ]


@pytest.mark.parametrize(
    "name,typo_flagged",
    [
        ("grpo-config.draft-07.schema.json", True),
        ("grpo-config.open-r1.schema.json", True),
        ("grpo-config.lenient.draft-07.schema.json", False),
    ],
)
def test_the_other_committed_schemas_work_in_the_editor_too(lsp, tmp_path, name, typo_flagged):
    config = tmp_path / "run.grpo.yaml"
    config.write_text(
        f"# yaml-language-server: $schema={(SCHEMAS / name).as_uri()}\n"
        "num_generaions: 8\ntemperature: -1\nloss_type: \n"
    )
    uri = lsp.open(config)
    assert [item["label"] for item in lsp.complete(uri, 3, len("loss_type: "))] == list(LOSS_TYPES)
    lines = sorted(
        d["range"]["start"]["line"]
        for d in lsp.wait_diagnostics(uri)
        if "loss_type" not in d["message"] and d["range"]["start"]["line"] != 3
    )
    assert lines == ([1, 2] if typo_flagged else [2])
    if "open-r1" in name:
        assert "system_prompt" in [item["label"] for item in lsp.complete(uri, 4, 0)]


@pytest.mark.parametrize("path", [COMPLETE, MISTAKES])
def test_data_files_start_with_the_modeline(path):
    assert path.read_text().startswith("# yaml-language-server: $schema=../../../schemas/grpo-config.schema.json\n")


def test_a_file_the_service_exports_resolves_its_schema_offline(lsp, tmp_path):
    """An exported YAML's modeline names the schema by a relative path; `grpo schema --write DIR` puts it there, and
    the editor then checks the file with no network at all."""
    pytest.importorskip("fastapi", reason="the service's export needs the web extra (pip install -e '.[web]')")
    from fastapi.testclient import TestClient

    from grpo_web.app import create_app
    from grpo_web.settings import Settings

    with TestClient(create_app(Settings())) as client:
        exported = client.post("/api/v1/yaml", json={"num_generations": 1, "loss_type": "dapo"}).text
    assert exported.splitlines()[0] == "# yaml-language-server: $schema=grpo-config.schema.json"
    done = grpo("schema", "--write", str(tmp_path))
    assert done.returncode == 0, done.stderr
    config = tmp_path / "exported.yaml"
    config.write_text(exported)
    uri = lsp.open(config)
    assert lsp.schemas_applied(uri) == [(tmp_path / "grpo-config.schema.json").resolve().as_uri()]
    line = next(i for i, text in enumerate(exported.splitlines()) if text.startswith("num_generations"))
    assert [d["range"]["start"]["line"] for d in lsp.wait_diagnostics(uri)] == [line]


def documented_association() -> dict[str, list[str]]:
    """The `yaml.schemas` block the VS Code section of docs/editors.md tells users to write."""
    page = (REPO / "docs" / "editors.md").read_text()
    block = next(b for b in re.findall(r"```json\n(.*?)```", page, re.S) if '"yaml.schemas"' in b)
    return json.loads(textwrap.dedent(block))["yaml.schemas"]


def test_the_documented_association_leaves_a_recipes_folders_accelerate_and_sft_files_alone():
    """yaml-language-server goes by file names alone: the documented globs must name only GRPO recipes, so open-r1's
    recipes/accelerate_configs/*.yaml and recipes/*/sft/*.yaml get no GRPO schema while recipes/*/grpo/ do."""
    from tests.editor.lsp_client import YamlLanguageServer, missing_reason
    from tests.support.configs import ACCELERATE, DDP, GRPO_RECIPE, SFT

    if missing_reason():
        pytest.skip(missing_reason())
    server = YamlLanguageServer(REPO, schemas=documented_association())  # "./schemas/..." from the workspace root
    try:
        recipe = [d["message"] for d in server.wait_diagnostics(server.open(GRPO_RECIPE))]
        # the open-r1 schema applies: its reward registry does not know TRL's names, a sign the schema is in use
        assert recipe and all("GRPO-R002" in m for m in recipe), recipe
        for path in (ACCELERATE, DDP, SFT):
            assert server.wait_diagnostics(server.open(path)) == [], path
    finally:
        server.close()

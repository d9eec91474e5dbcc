"""The editor's "migrate this file" writes exactly the file `grpo migrate --write` writes, for the same text and
the same judged release: old recipes of the TRL 0.14-0.19 era, with and without a `# grpo: --trl-version` comment."""

from __future__ import annotations

import pytest
import yaml

from grpo_schema.cli import main
from tests.support.lsp import apply_edits, open_text
from tests.support.old_recipe import OLD_014_JUDGED_AT_019

OLD_016 = (
    "model_name_or_path: Qwen/Qwen2.5-0.5B  # the base\nmax_prompt_length: 512\nuse_vllm: true\n"
    "vllm_device: cuda:7\nscale_rewards: true\nnum_generations: 8\nper_device_train_batch_size: 8\n"
)
RECIPES = {
    "trl-0.16-comment": "# grpo: --trl-version 0.16\n" + OLD_016,
    "trl-0.16-default-release": OLD_016,
    "trl-0.14-prompts": (
        "# grpo: --trl-version 0.14\nmodel_name_or_path: m\nper_device_train_batch_size: 2\n"
        "num_generations: 4\nmax_prompt_length: 256\nbeta: 0.04\n"
    ),
    "open-r1-0.17": (
        "# grpo: --profile open-r1 --trl-version 0.17\nmodel_name_or_path: m\nreward_funcs: [accuracy, format]\n"
        "system_prompt: be brief\nmax_prompt_length: 512\ntorch_dtype: bfloat16\n"
    ),
    "trl-0.19-no-loss-type": (
        "# grpo: --trl-version 0.19\nmodel_name_or_path: m\nuse_vllm: true\n"
        "vllm_mode: colocate\nscale_rewards: false\ntorch_dtype: bfloat16  # halves memory\n"
    ),
}


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_the_editors_migrate_action_writes_what_grpo_migrate_writes(server, tmp_path, capsys, name):
    text = RECIPES[name]
    uri = open_text(server, tmp_path, "editor.yaml", text)
    server.wait_publish(uri)
    actions = {a["kind"]: a for a in server.code_actions(uri, (0, 0), (0, 0), only=["source.grpo.migrate"])}
    cli_file = tmp_path / "cli.yaml"
    cli_file.write_text(text, encoding="utf-8")
    main(["migrate", "--write", str(cli_file)])
    capsys.readouterr()
    expected = cli_file.read_text(encoding="utf-8")
    assert expected != text  # every recipe here has something to migrate
    assert set(actions) == {"source.grpo.migrate"}
    assert apply_edits(text, actions["source.grpo.migrate"]["edit"]["changes"][uri]) == expected


def test_keys_older_than_the_release_judged_get_that_release_s_migration(server, tmp_path, capsys):
    """A 0.14-era file judged at 0.19 (its comment): besides the move to 1.16, the editor offers the migration to
    0.19 itself, byte for byte what `grpo migrate --to 0.19 --write` writes."""
    text = OLD_014_JUDGED_AT_019
    uri = open_text(server, tmp_path, "editor.yaml", text)
    server.wait_publish(uri)
    actions = {a["kind"]: a for a in server.code_actions(uri, (0, 0), (0, 0), only=["source.grpo.migrate"])}
    cli_file = tmp_path / "cli.yaml"
    cli_file.write_text(text, encoding="utf-8")
    main(["migrate", "--to", "0.19", "--write", str(cli_file)])
    capsys.readouterr()
    expected = cli_file.read_text(encoding="utf-8")
    assert "vllm_device" not in yaml.safe_load(expected) and "eval_strategy: steps" in expected
    assert "--trl-version 0.19" in expected
    assert set(actions) == {"source.grpo.migrate", "source.grpo.migrate.release"}
    in_release = actions["source.grpo.migrate.release"]
    assert "TRL 0.19.1" in in_release["title"]
    assert apply_edits(text, in_release["edit"]["changes"][uri]) == expected

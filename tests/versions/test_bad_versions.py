"""A TRL version that cannot be judged (not a version, or older than GRPO) is the same usage error on every
command that takes one: exit 2, `grpo CMD: error: --trl-version: ...`, naming the supported range."""

from __future__ import annotations

import pytest

from grpo_schema.versions import newest

RANGE = f"supported releases are 0.14.0 to {newest()}"
RECIPE = """model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
dataset_name: trl-lib/tldr
reward_funcs: [accuracy_reward]
hardware: 1xH100-80GB
"""


@pytest.fixture
def recipe(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(RECIPE)
    return str(path)


# The commands that start only with their extra installed (each refuses to start without it, before any option).
EXTRAS = {"lsp": ("pygls", "lsp"), "serve": ("fastapi", "web")}


def commands(recipe: str) -> dict:
    return {
        "validate": ["validate", recipe],
        "explain": ["explain", recipe],
        "plan": ["plan", recipe],
        "schema": ["schema"],
        "smoke": ["smoke", recipe],
        "lsp": ["lsp"],
        "serve": ["serve"],
    }


@pytest.mark.parametrize(
    "bad, said",
    [
        ("abc", "not a TRL version: 'abc'"),
        ("0.9", "TRL 0.9.0 has no GRPOTrainer"),
        ("0.13.2", "TRL 0.13.2 has no GRPOTrainer"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "explain", "plan", "schema", "smoke", "lsp", "serve"])
def test_a_bad_version_is_a_usage_error_naming_the_range(recipe, command, bad, said, capsys):
    from grpo_schema.cli import main

    if command in EXTRAS:
        module, extra = EXTRAS[command]
        pytest.importorskip(module, reason=f"grpo {command} needs the {extra} extra (pip install -e '.[{extra}]')")

    argv = commands(recipe)[command]
    code = main([*argv, "--trl-version", bad])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"grpo {command}: error: --trl-version: {said}" in err and RANGE in err, err
    assert "Traceback" not in err and "usage:" not in err


@pytest.mark.parametrize("option", ["--from", "--to"])
def test_migrate_from_and_to_name_the_range(recipe, option, capsys):
    from grpo_schema.cli import main

    code = main(["migrate", recipe, option, "abc"])
    err = capsys.readouterr().err
    assert code == 2 and "not a TRL version: 'abc'" in err and RANGE in err, err


def test_migrate_to_an_older_release_than_the_file_is_a_usage_error(recipe, capsys):
    from grpo_schema.cli import main

    code = main(["migrate", recipe, "--from", "0.23", "--to", "0.19"])
    err = capsys.readouterr().err
    assert code == 2 and "older than the release the file is written for (TRL 0.23)" in err, err


def test_a_comment_naming_a_bad_version_is_reported_on_its_line(tmp_path, capsys):
    from grpo_schema.cli import main

    path = tmp_path / "run.yaml"
    path.write_text("# grpo: --trl-version 0.9\n" + RECIPE)
    main(["validate", str(path)])
    out = capsys.readouterr()
    assert "TRL 0.9.0 has no GRPOTrainer" in out.out + out.err and RANGE in out.out + out.err

"""`grpo migrate` on every real config: no migration left, every comment kept, idempotent, --write round-trips."""

from __future__ import annotations

import pytest

from grpo_schema import check_text
from grpo_schema.commands.migrate import migrate_text
from tests.conftest import REPO, corpus_files
from tests.support.cli import grpo

MIGRATION_CODES = {"GRPO-K002", "GRPO-K003"}


def migrated(text: str) -> tuple[str, list[str]]:
    new, _, failed = migrate_text(text, check_text(text, suggest_fixes=False).diagnostics)
    return new, failed


def comment_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def test_corpus_migrates_completely_and_keeps_comments(shared_dir):
    files = corpus_files("valid")
    assert len(files) == 61
    touched = 0
    for path in files:
        text = path.read_bytes().decode("utf-8")
        new, failed = migrated(text)
        assert not failed, (path.name, failed)
        left = [
            d.code
            for d in check_text(new, suggest_fixes=False).diagnostics
            if d.code in MIGRATION_CODES or (d.code.startswith("GRPO-D") and d.fix is not None)
        ]
        assert not left, (path.name, left)
        kept = comment_lines(new)
        assert all(line in kept for line in comment_lines(text)), path.name
        assert migrated(new)[0] == new, path.name  # a second run changes nothing
        touched += new != text
    assert touched >= 30  # the corpus README counts 32 files with keys TRL 1.16 does not read


def test_removal_that_needs_a_decision_leaves_a_comment():
    new, _ = migrated("use_vllm: true\nvllm_device: cuda:7\nseed: 1\n")
    assert new.startswith("use_vllm: true\n# grpo migrate removed `vllm_device: cuda:7`: choose vllm_mode")
    assert new.endswith("seed: 1\n")


def run(*args: str, cwd=None):
    return grpo("migrate", *args, cwd=cwd or REPO)


def test_cli_diff_then_write_round_trips(shared_dir, tmp_path):
    source = next(p for p in corpus_files("valid") if p.name.startswith("05_"))
    target = tmp_path / "recipe.yaml"
    target.write_bytes(source.read_bytes())
    shown = run(str(target))
    assert shown.returncode == 1 and shown.stdout.startswith("--- a/") and "+dtype: bfloat16" in shown.stdout
    assert target.read_bytes() == source.read_bytes()  # without --write nothing changes
    written = run(str(target), "--write")
    assert written.returncode == 0, written.stderr
    assert target.read_text() == migrated(source.read_text())[0]
    again = run(str(target))
    assert (again.returncode, again.stdout) == (0, "")


@pytest.mark.parametrize("args, code", [(("missing.yaml",), 2), (("--help",), 0), ((), 2)])
def test_cli_usage_exit_codes(args, code, tmp_path):
    done = run(*args, cwd=tmp_path)
    assert done.returncode == code, done.stderr
    if args == ("--help",):
        assert "exit status" in done.stdout and "--write" in done.stdout


def test_cli_refuses_a_file_that_is_not_a_mapping(tmp_path):
    target = tmp_path / "list.yaml"
    target.write_text("- a\n- b\n")
    assert run(str(target)).returncode == 2

"""The verl release a file is judged at: declared by --verl-version, a `# grpo: --verl-version` comment or a verl==
pin in the script, else the newest the dialect knows; each release with the keys of its own config files (verl 0.8.0's
table comes from its release tag, scripts/verl_release.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpo_schema.cli import main
from grpo_schema.dialects.verl.check import check_verl_text
from grpo_schema.dialects.verl.fields import releases, resolve
from tests.support.verl_runs import LAUNCH_HEAD

LAUNCH = LAUNCH_HEAD
# keys one release has and the other does not (from the two releases' own config files)
ONLY_08 = "    actor_rollout_ref.rollout.skip.enable=True\n"  # removed in 0.9
ONLY_09 = "    actor_rollout_ref.actor.policy_loss.dro_beta=0.1\n"  # added in 0.9
MINDSPEED = "    model_engine=mindspeed\n"  # an engine 0.8 ships and 0.9 dropped


def _errors(text: str, version: str | None = None) -> set[str]:
    return {d.code for d in check_verl_text(text, "run.sh", version).diagnostics if d.severity == "error"}


def test_the_releases_and_how_a_declared_one_resolves() -> None:
    assert releases()[:2] == ("0.9.1", "0.8.0")
    assert (resolve("0.8"), resolve("v0.8.0"), resolve("0.9.0"), resolve("0.3.1"), resolve("x")) == (
        "0.8.0",
        "0.8.0",
        "0.9.1",
        None,
        None,
    )


@pytest.mark.parametrize(
    ("tail", "at_08", "at_09"),
    [(ONLY_08, set(), {"GRPO-Q004"}), (ONLY_09, {"GRPO-Q004"}, set()), (MINDSPEED, set(), {"GRPO-Q024"})],
)
def test_each_release_judges_with_its_own_keys(tail: str, at_08: set[str], at_09: set[str]) -> None:
    assert _errors(LAUNCH + tail, "0.8") == at_08
    assert _errors(LAUNCH + tail) == at_09
    assert _errors("# grpo: --verl-version 0.8\n" + LAUNCH + tail) == at_08
    assert _errors("pip install verl==0.8.0\n" + LAUNCH + tail) == at_08
    assert _errors("pip install verl==0.8.0\n" + LAUNCH + tail, "0.9.1") == at_09  # the flag wins


def test_an_08_file_is_told_its_checks_run_on_the_cluster() -> None:
    result = check_verl_text("pip install verl==0.8.0\n" + LAUNCH, "run.sh")
    assert (result.trl_version, result.sources["verl_version"]) == ("0.8.0", "requirements")
    assert any("inside Ray, after the cluster is allocated" in d.message for d in result.diagnostics)
    assert not any("inside Ray" in d.message for d in check_verl_text(LAUNCH, "run.sh").diagnostics)


def test_a_release_without_a_table_is_said_and_the_newest_judges() -> None:
    result = check_verl_text("pip install verl==0.3.1\n" + LAUNCH, "run.sh")
    (note,) = [d for d in result.diagnostics if "has no field table" in d.message]
    assert (note.severity, note.line, result.trl_version) == ("warning", 1, "0.9.1") and "0.8.0" in note.hint


def test_the_cli_takes_verl_version(tmp_path: Path, capsys) -> None:
    path = tmp_path / "run.sh"
    path.write_text(LAUNCH + ONLY_08)
    assert main(["validate", str(path), "--verl-version", "0.8"]) == 0
    assert "judged as verl 0.8.0 (--verl-version)" in capsys.readouterr().out
    assert main(["validate", str(path), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["files"][0]["trl_version"] == "0.9.1"
    assert main(["explain", str(path), "--verl-version", "0.8.0"]) == 0

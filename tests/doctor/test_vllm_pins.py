"""What a pinned vLLM brings with it: the torch its wheel pins exactly, judged by the known-bad rows and the rules as a
pinned torch is, saying that it came through vLLM's pin; a torch or transformers that vLLM's own requirements refuse
(GRPO-C020); open-r1's own stack judged as it ran; the committed table's provenance."""

from __future__ import annotations

import json

import pytest

from grpo_schema.doctor import diagnose
from grpo_schema.doctor.environment import from_file
from grpo_schema.doctor.implied import VLLM_TABLE, vllm_requirements
from grpo_schema.doctor.known_bad import ROWS
from grpo_schema.versions.tables import RELEASES_DIR


def requirements(tmp_path, text, name="requirements.txt"):
    path = tmp_path / name
    path.write_text(text)
    return from_file(str(path), "requirements")


def found(env, config=None, severity=None):
    report = diagnose(env, config or {})
    return [d for d in report.diagnostics if severity is None or d.severity == severity]


def test_torch_is_the_one_vllm_pins(tmp_path):
    env = requirements(tmp_path, "trl==0.18.0\nvllm==0.8.5.post1\n")
    torch = env.get("torch")
    assert torch.version == "2.6.0" and torch.extra["pinned_by"] == "vllm 0.8.5.post1 (torch==2.6.0)"
    assert torch.described() == "torch 2.6.0 (through vllm 0.8.5.post1's pin, torch==2.6.0)"
    # a range the file writes for torch that admits vLLM's pin resolves to it: judged, not "not pinned"
    env = requirements(tmp_path, "trl==0.19.1\nvllm==0.9.2\ntorch>=2.5\n")
    assert env.get("torch").version == "2.7.0" and env.get("torch").line == 3
    assert not [d for d in found(env, {"use_vllm": True}) if d.code == "GRPO-C017" and "torch" in d.message]


def test_a_known_bad_row_is_judged_through_vllms_pin(tmp_path):
    """TRL 0.16 cannot resume with torch 2.6 (KB09): a file that pins vLLM 0.8.5 gets torch 2.6.0 without naming it."""
    env = requirements(tmp_path, "trl==0.16.1\nvllm==0.8.5.post1\n")
    [row] = [d for d in found(env, {"use_vllm": True, "resume_from_checkpoint": True}) if "KB09" in d.message]
    assert row.severity == "error" and "torch 2.6.0 (through vllm 0.8.5.post1's pin, torch==2.6.0)" in row.message
    # the fix torch<2.6 cannot be installed beside vLLM 0.8.5: the hint names the vLLM that brings such a torch
    assert "`torch<2.6`" in row.hint and "write `vllm==0.7.3`, the newest vLLM that pins a torch inside" in row.hint
    assert not [d for d in found(env, {"use_vllm": True}) if "KB09" in d.message]  # no resume: not that row


@pytest.mark.parametrize("trl", ["0.16.1", "0.17.0", "0.18.0", "0.18.2"])
@pytest.mark.parametrize("torch", ["", "torch==2.6.0\n"])
def test_open_r1s_own_stack_is_not_broken(tmp_path, trl, torch):
    """open-r1's pins (vLLM 0.8.5.post1, torch 2.6.0 written or left to vLLM, transformers of its day) with the TRL
    releases its recipes ran on, in both vLLM modes: no error (0.16 keeps its V1-engine warning)."""
    env = requirements(tmp_path, f"trl[vllm]=={trl}\nvllm==0.8.5.post1\n{torch}transformers==4.52.3\n")
    assert env.version("torch") == "2.6.0"
    for mode in ("server", "colocate"):
        diags = found(env, {"use_vllm": True, "vllm_mode": mode, "bf16": True})
        assert [d.message for d in diags if d.severity == "error"] == []
        assert {d.code for d in diags} <= {"GRPO-C004", "GRPO-C017"}


def test_open_r1s_conda_environment_is_read_through_its_pip_section(tmp_path):
    path = tmp_path / "environment.yml"
    path.write_text(
        "name: openr1\nchannels: [defaults]\ndependencies:\n  - python=3.11\n  - pip\n"
        "  - pip:\n    - trl==0.18.0\n    - vllm==0.8.5.post1\n"
    )
    env = from_file(str(path), "freeze")
    assert env.source == "requirements" and env.version("torch") == "2.6.0"
    assert [d.message for d in found(env, {"use_vllm": True}, "error")] == []


def test_a_torch_or_transformers_that_vllms_pins_refuse(tmp_path):
    env = requirements(tmp_path, "trl==0.21.0\nvllm==0.10.0\ntorch==2.6.0\n")
    [c020] = [d for d in found(env) if d.code == "GRPO-C020"]  # pip refuses the file, used or not
    assert c020.severity == "error" and "vllm 0.10.0 requires torch==2.7.1" in c020.message
    assert "has torch 2.6.0: pip cannot install both" in c020.message and "`torch==2.7.1`" in c020.hint
    env = requirements(tmp_path, "trl==0.19.1\nvllm==0.9.2\ntorch<2.7\ntransformers==4.50.0\n")
    messages = sorted(d.message for d in found(env) if d.code == "GRPO-C020")
    assert ["torch==2.7.0" in messages[0], "transformers>=4.51.1" in messages[1]] == [True, True]
    # the pair a known-bad row names is said once, by the row and its source
    env = requirements(tmp_path, "trl==0.18.0\nvllm==0.8.5.post1\ntorch==2.5.1\n")
    codes = [d.code for d in found(env, {"use_vllm": True}) if "torch" in d.message]
    assert codes == ["GRPO-C003"]


def test_an_installed_vllm_beside_another_torch_matters_where_vllm_is_used(tmp_path):
    frozen = tmp_path / "freeze.txt"
    frozen.write_text("trl==0.19.1\nvllm==0.9.2\ntorch==2.6.0+cu124\ntransformers==4.53.0\naccelerate==1.8.0\n")
    env = from_file(str(frozen), "freeze")
    [c020] = [d for d in found(env, {"use_vllm": True}) if d.code == "GRPO-C020"]
    assert "has torch 2.6.0+cu124: vLLM is not built for it" in c020.message
    assert not [d for d in found(env) if d.code == "GRPO-C020"]
    frozen.write_text("trl==0.19.1\nvllm==0.9.2\ntorch==2.7.0+cu126\ntransformers==4.53.0\naccelerate==1.8.0\n")
    assert not [d for d in found(from_file(str(frozen), "freeze"), {"use_vllm": True}) if d.code == "GRPO-C020"]


def test_a_vllm_release_the_table_does_not_hold_is_not_guessed(tmp_path):
    env = requirements(tmp_path, "trl==0.18.0\nvllm==0.8.6\n")
    assert vllm_requirements("0.8.6") is None and env.get("torch").version is None


def test_a_single_report_is_a_warning_and_weave_needs_unsloth(tmp_path):
    assert not [r.id for r in ROWS if r.evidence == "report" and r.fails]
    assert {r.id for r in ROWS if r.evidence == "report"} >= {"KB07", "KB11", "KB13"}
    frozen = tmp_path / "freeze.txt"
    frozen.write_text("trl==0.27.2\ntorch==2.8.0\ntransformers==4.57.1\naccelerate==1.10.0\ndatasets==4.0.0\n")
    assert not [d for d in found(from_file(str(frozen), "freeze")) if "KB11" in d.message]
    frozen.write_text(frozen.read_text() + "unsloth==2025.11.1\n")
    [row] = [d for d in found(from_file(str(frozen), "freeze")) if "KB11" in d.message]
    assert row.severity == "warning"


def test_the_vllm_table_covers_the_releases_trl_generates_with():
    """Read from each vLLM wheel's metadata (scripts/vllm_requirements.py): every row names its wheel and hash, torch
    is pinned exactly, and every vLLM minor from 0.7 to the newest a TRL release's vllm extra allows is there."""
    table = json.loads(VLLM_TABLE.read_text())
    assert "METADATA" in table["source"]
    rows = table["releases"]
    for version, row in rows.items():
        assert row["wheel"].startswith(f"vllm-{version}-") and len(row["sha256"]) == 64
        assert row["torch"].startswith("==")
    expected = {"0.7.2": "==2.5.1", "0.8.5": "==2.6.0", "0.8.5.post1": "==2.6.0", "0.9.2": "==2.7.0"}
    expected.update({"0.10.0": "==2.7.1", "0.10.2": "==2.8.0", "0.11.0": "==2.8.0"})
    assert {v: rows[v]["torch"] for v in expected} == expected
    from packaging.requirements import Requirement
    from packaging.version import Version

    trl = json.loads((RELEASES_DIR / "requirements.json").read_text())["releases"]
    bounds = [
        Version(clause.version)
        for data in trl.values()
        for text in data["extras"].get("vllm", [])
        for clause in Requirement(text).specifier
        if Requirement(text).name == "vllm" and clause.operator in ("<=", "==")
    ]
    minors = {Version(v).release[:2] for v in rows}
    newest = max(bounds).release[:2]
    assert all((0, m) in minors for m in range(7, newest[1] + 1)), sorted(minors)


def test_a_vllm_outside_the_release_range_is_said_once(tmp_path):
    """TRL 1.8 declares vllm>=0.16.0,<=0.23.0: vLLM 0.15 is GRPO-C005 with that range, not KB05 again; where the
    release declares no range (TRL 0.14), the row (KB04) still says it."""
    frozen = tmp_path / "freeze.txt"
    frozen.write_text("trl==1.8.0\nvllm==0.15.1\ntorch==2.9.1\ntransformers==4.57.1\naccelerate==1.10.0\n")
    diags = found(from_file(str(frozen), "freeze"), {"use_vllm": True, "vllm_mode": "colocate"})
    assert [d.code for d in diags if "vllm 0.15.1" in d.message] == ["GRPO-C005"]
    frozen.write_text("trl==0.14.0\nvllm==0.12.0\ntorch==2.9.0\ntransformers==4.57.1\naccelerate==1.10.0\n")
    diags = found(from_file(str(frozen), "freeze"), {"use_vllm": True})
    assert [d.code for d in diags if "KB04" in d.message] == ["GRPO-C003"]
    assert not [d for d in diags if d.code == "GRPO-C005"]

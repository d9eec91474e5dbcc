"""grpo doctor reads a requirements file as pip does: `-r` includes followed, what pip installs with a pinned trl
present (judged only where the file pins it), a conda environment file by its pip section, and any other YAML,
JSON or TOML refused; a known-bad row that rests on a single report is a warning."""

from __future__ import annotations

import pytest

from grpo_schema.doctor import diagnose
from grpo_schema.doctor.environment import EnvironmentError_, from_file
from grpo_schema.doctor.known_bad import ROWS

OPEN_R1 = "trl[vllm]==0.18.0\ntorch==2.6.0\n"


def errors(env, config=None):
    return [d.code for d in diagnose(env, config or {}).diagnostics if d.severity == "error"]


def test_includes_are_followed_relative_to_the_including_file(tmp_path):
    (tmp_path / "deps").mkdir()
    (tmp_path / "deps" / "base.txt").write_text("trl==0.18.0\nvllm==0.8.5.post1\n")
    (tmp_path / "req.txt").write_text("torch==2.6.0\n-r deps/base.txt\n")
    env = from_file(str(tmp_path / "req.txt"), "requirements")
    assert env.version("trl") == "0.18.0" and env.version("vllm") == "0.8.5.post1"
    assert env.get("trl").line == 2  # reported on the -r line of the file given


def test_what_pip_installs_with_trl_is_not_missing(tmp_path):
    path = tmp_path / "req.txt"
    path.write_text(OPEN_R1)
    env = from_file(str(path), "requirements")
    assert env.get("transformers") is not None and env.get("transformers").version is None
    assert env.get("vllm") is not None  # the [vllm] extra
    assert errors(env, {"use_vllm": True}) == []


def test_a_conda_environment_file_is_read_by_its_pip_section(tmp_path):
    path = tmp_path / "environment.yml"
    path.write_text(
        "name: r1\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n"
        "    - trl==0.18.0\n    - torch==2.6.0\n"
    )
    env = from_file(str(path), "freeze")
    assert env.source == "requirements" and env.version("trl") == "0.18.0"
    assert errors(env) == []


@pytest.mark.parametrize(
    "text", ["use_vllm: true\nmodel_name_or_path: m\n", '{"trl": "0.18.0"}\n', "[project]\nname = 'x'\n"]
)
def test_a_format_it_cannot_read_is_refused(tmp_path, text):
    path = tmp_path / "env.txt"
    path.write_text(text)
    with pytest.raises(EnvironmentError_, match="not read"):
        from_file(str(path), "freeze")


def test_a_single_report_is_never_an_error():
    assert {r.id for r in ROWS if r.evidence == "report"} >= {"KB07", "KB13"}
    assert not [r.id for r in ROWS if r.evidence == "report" and r.fails]


def test_what_pip_installs_with_the_listed_packages_is_present_through_an_include(tmp_path):
    """trl pulls in accelerate, which pulls in torch; vLLM pulls in torch too, the release its wheel pins: a
    requirements file that pins trl and vLLM (here through `-r`) and leaves torch to pip has vLLM's torch."""
    (tmp_path / "req.txt").write_text("trl==0.19.1\n")
    torch = from_file(str(tmp_path / "req.txt"), "requirements").get("torch")
    assert torch is not None and torch.version is None and torch.extra["implied_by"].startswith("accelerate")
    (tmp_path / "serve.txt").write_text("vllm==0.9.2\n")
    (tmp_path / "req.txt").write_text("trl==0.19.1\n-r serve.txt\n")
    env = from_file(str(tmp_path / "req.txt"), "requirements")
    assert env.get("torch").version == "2.7.0" and env.get("torch").extra["implied_by"] == "vllm 0.9.2"
    assert errors(env, {"use_vllm": True}) == []
    (tmp_path / "req.txt").write_text("-r serve.txt\n")
    assert from_file(str(tmp_path / "req.txt"), "requirements").get("torch").version == "2.7.0"

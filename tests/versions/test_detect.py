"""default_version(): a flag, the `trl` installed beside the interpreter (its metadata), a pin in the config's
repository, or the default."""

from __future__ import annotations

import sys

import pytest

from grpo_schema.versions import VersionError, default_version, installed_version, resolve_specifier


def fake_site(tmp_path, version="0.19.1", name="trl"):
    site = tmp_path / "site"
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return site


def test_flag_comes_first(tmp_path):
    assert default_version(tmp_path / "run.yaml", flag="0.23", search_path=[str(fake_site(tmp_path))]) == (
        "0.23",
        "flag",
        None,
    )


def test_a_bad_flag_is_refused():
    with pytest.raises(VersionError):
        default_version(flag="0.12")


def test_installed_distribution_from_a_search_path(tmp_path):
    site = fake_site(tmp_path)
    found = default_version(tmp_path / "run.yaml", search_path=[str(site)])
    assert found.version == "0.19.1" and found.source == "installed"
    assert found.file.endswith("trl-0.19.1.dist-info/METADATA")


def test_installed_distribution_on_sys_path(tmp_path, monkeypatch):
    site = fake_site(tmp_path, "0.16.1")
    monkeypatch.setattr(sys, "path", [str(site)])
    assert installed_version() == ("0.16.1", str(site / "trl-0.16.1.dist-info" / "METADATA"))
    assert default_version().source == "installed"


def test_other_distributions_are_not_trl(tmp_path):
    site = fake_site(tmp_path, "9.9.9", name="trlx")
    assert installed_version([str(site)]) is None


def repo(tmp_path):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "recipes" / "qwen").mkdir(parents=True)
    return root


@pytest.mark.parametrize(
    "line, expected",
    [
        ("trl==0.19.1", "0.19.1"),
        ("trl>=0.19,<0.20", "0.19.1"),
        ("trl[vllm]==0.16.0", "0.16.0"),
        ("trl [vllm, peft] == 0.23.1 ; python_version >= '3.10'", "0.23.1"),
        ("TRL~=0.22.0", "0.22.2"),
        ("trl==0.18.*", "0.18.2"),
        ("trl>=0.14,!=0.15.2,<0.16  # pinned for open-r1", "0.14.0"),
    ],
)
def test_requirements_pins(tmp_path, line, expected):
    root = repo(tmp_path)
    (root / "requirements.txt").write_text(f"# deps\ntorch>=2.4\n-e .\n{line}\nvllm==0.8.5\n")
    found = default_version(root / "recipes" / "qwen" / "run.yaml", search_path=[])
    assert found == (expected, "requirements", str(root / "requirements.txt"))


def test_the_nearest_folder_wins_and_the_walk_stops_at_the_repository_root(tmp_path):
    root = repo(tmp_path)
    (tmp_path / "requirements.txt").write_text("trl==0.14.0\n")  # above the repository: never read
    (root / "requirements-dev.txt").write_text("trl==0.19.1\n")
    (root / "recipes" / "requirements.txt").write_text("trl==0.23.1\n")
    config = root / "recipes" / "qwen" / "run.yaml"
    assert default_version(config, search_path=[]).version == "0.23.1"
    (root / "recipes" / "requirements.txt").unlink()
    assert default_version(config, search_path=[]).version == "0.19.1"
    (root / "requirements-dev.txt").unlink()
    assert default_version(config, search_path=[]) == ("1.16.0", "default", None)


def test_pyproject_and_setup_py_pins(tmp_path):
    root = repo(tmp_path)
    (root / "pyproject.toml").write_text(
        '[project]\ndependencies = [\n  "accelerate>=1.4",\n  "trl[vllm]==0.16.0",\n]\n'
    )
    assert default_version(root / "run.yaml", search_path=[]) == (
        "0.16.0",
        "requirements",
        str(root / "pyproject.toml"),
    )
    (root / "pyproject.toml").unlink()
    (root / "setup.py").write_text('_deps = ["transformers>=4.49", "trl @ git+https://x", "trl>=0.19,<0.20"]\n')
    assert default_version(root / "run.yaml", search_path=[]).version == "0.19.1"


def test_poetry_pins(tmp_path):
    root = repo(tmp_path)
    (root / "pyproject.toml").write_text('[tool.poetry.dependencies]\npython = "^3.10"\ntrl = "^0.19.0"\n')
    assert default_version(root / "run.yaml", search_path=[]).version == "0.19.1"


def test_unpinned_trl_and_other_packages_are_not_pins(tmp_path):
    root = repo(tmp_path)
    (root / "requirements.txt").write_text("trl\ntrl-extras==0.1\nopen-trl==2.0\n")
    assert default_version(root / "run.yaml", search_path=[]).source == "default"


def test_resolve_specifier():
    assert resolve_specifier("==0.19.0") == "0.19.0"
    assert resolve_specifier(">=1.0,<1.6") == "1.5.1"
    assert resolve_specifier(">=9") is None
    assert resolve_specifier("") is None

"""benchmarks/against.py: an earlier commit's service, checked out beside this one and measured in the same run.
No timing asserts: only that both sides really ran their own code and the worktree is gone afterwards."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks import against  # noqa: E402


def worktrees() -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "list", "--porcelain"], capture_output=True, text=True, check=True
    ).stdout
    return [line for line in listed.splitlines() if line.startswith("worktree ")]


@pytest.fixture
def git_checkout():
    if not (REPO / ".git").exists():
        pytest.skip("benchmarks/against.py needs a git checkout (this tree has no .git)")


def test_import_root_names_a_checkout_packages_under_their_import_names(tmp_path):
    old = tmp_path / "old"
    for folder in ("grpo_schema", "web"):  # a checkout from before the service package was grpo_web
        (old / folder).mkdir(parents=True)
    root = against.import_root(old, tmp_path / "root")
    assert sorted(p.name for p in root.iterdir()) == ["grpo_schema", "grpo_web", "web"]
    assert (root / "grpo_web").resolve() == (old / "web").resolve()


def test_child_measures_the_app_first_on_its_path(tmp_path):
    """The child imports the service from the folder it is given, not from the editable install: a fake app
    there that answers 500 makes it fail."""
    fake = tmp_path / "fake" / "grpo_web"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "settings.py").write_text("class Settings: pass\n")
    (fake / "app.py").write_text(
        "def create_app(settings):\n"
        "    async def app(scope, receive, send):\n"
        "        await send({'type': 'http.response.start', 'status': 500, 'headers': []})\n"
        "        await send({'type': 'http.response.body', 'body': b''})\n"
        "    return app\n"
    )
    with pytest.raises(RuntimeError, match="answered 500"):
        against.measure_side(tmp_path / "fake", 1, 1)


@pytest.mark.slow
def test_compare_with_head_runs_both_sides_and_removes_its_worktree(tmp_path, git_checkout):
    before = worktrees()
    out = tmp_path / "against.json"
    assert against.main(["HEAD", "--rounds", "1", "--trials", "2", "--per-trial", "20", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert worktrees() == before
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert result["commit"] == head and set(result["sides"]) == {"this checkout", head}
    for side in result["sides"].values():
        assert side["validate_ms"] > side["healthz_ms"] > 0
    ours, theirs = result["sides"]["this checkout"], result["sides"][head]
    assert result["validate_ratio"] == pytest.approx(ours["validate_ms"] / theirs["validate_ms"])

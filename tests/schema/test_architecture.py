"""The package's shape holds: pyproject.toml's import contracts are kept, and grpo_schema has no import cycle.

Each check is also run on a copy of the package with one upward import seeded into the engine's bottom layer, so a
check that could not fail would fail here.
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib

from tests.conftest import REPO
from tests.support.imports import import_cycles

pytest.importorskip("importlinter", reason="import-linter is not installed (pip install 'grpo-config[test]')")
pytest.importorskip("grimp", reason="grimp (import-linter's graph) is not installed")

# The bottom of the engine importing the top surface: an upward import, and a cycle (cli imports the engine).
SEEDED_MODULE = "grpo_schema/engine/diagnostics.py"
SEEDED_IMPORT = "\nimport grpo_schema.cli  # noqa: E402,F401  (seeded by the architecture test)\n"


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _lint(config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return _run(
        f"from importlinter.cli import lint_imports\n"
        f"raise SystemExit(lint_imports(config_filename={str(config)!r}, no_cache=True, no_logo=True))",
        cwd,
    )


def _cycles_in_subprocess(cwd: Path) -> subprocess.CompletedProcess[str]:
    source = textwrap.dedent(inspect.getsource(import_cycles))
    return _run(f"{source}\nprint(import_cycles('grpo_schema'))", cwd)


def _schema_contracts_ini(contracts: list[dict]) -> str:
    """pyproject's grpo_schema contracts as an INI config over grpo_schema alone (for a copy of the package)."""
    lines = ["[importlinter]", "root_packages =", "    grpo_schema", "exclude_type_checking_imports = True", ""]
    for contract in contracts:
        lines.append(f"[importlinter:contract:{contract['id']}]")
        for key, value in contract.items():
            if key == "id":
                continue
            if isinstance(value, list):
                lines.append(f"{key} =")
                lines += [f"    {item}" for item in value]
            else:
                lines.append(f"{key} = {value}")
        lines.append("")
    return "\n".join(lines)


def _inner_contracts() -> list[dict]:
    """The contracts about grpo_schema's own modules (the forbidden-externals one needs grpo_runtime beside it)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    return [c for c in config["contracts"] if c["id"].startswith("schema-") and c["id"] != "schema-no-runtime"]


@pytest.fixture(scope="module")
def seeded_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("seeded")
    shutil.copytree(REPO / "grpo_schema", root / "grpo_schema", ignore=shutil.ignore_patterns("__pycache__"))
    with open(root / SEEDED_MODULE, "a", encoding="utf-8") as handle:
        handle.write(SEEDED_IMPORT)
    (root / ".importlinter").write_text(_schema_contracts_ini(_inner_contracts()))
    return root


def test_the_import_contracts_are_kept():
    done = _lint(REPO / "pyproject.toml", REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_the_contracts_cover_the_package():
    ids = {c["id"] for c in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}
    assert {
        "schema-surfaces-above-engine",
        "schema-engine-layers",
        "schema-engine-no-surface",
        "schema-no-runtime",
    } <= ids


def test_the_run_store_contract_names_every_module_of_web_runs():
    """A hand-kept list: a module added to web/runs/ and left out of it escapes the rule unseen."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "web-runs-below-routes")
    modules = {f"grpo_web.runs.{p.stem}" for p in (REPO / "web" / "runs").glob("*.py") if p.stem != "__init__"}
    routers = set(contract["forbidden_modules"])  # runs/service.py installs the routes: it is above the store
    assert set(contract["source_modules"]) == modules - routers


def test_grpo_schema_has_no_import_cycle():
    assert import_cycles("grpo_schema") == []


def test_an_upward_import_breaks_the_contracts(seeded_copy: Path):
    done = _lint(seeded_copy / ".importlinter", seeded_copy)
    assert done.returncode != 0, done.stdout
    assert "grpo_schema.engine.diagnostics -> grpo_schema.cli" in done.stdout
    for contract in ("schema-surfaces-above-engine", "schema-engine-no-surface"):
        name = next(c["name"] for c in _inner_contracts() if c["id"] == contract)
        assert f"{name} BROKEN" in " ".join(done.stdout.split()), done.stdout


def test_the_same_import_is_found_as_a_cycle(seeded_copy: Path):
    done = _cycles_in_subprocess(seeded_copy)
    assert done.returncode == 0, done.stderr
    assert "grpo_schema.engine.diagnostics" in done.stdout and "grpo_schema.cli" in done.stdout, done.stdout

"""The layers the folders show are the layers the code has: every import-linter contract of pyproject.toml holds,
grpo_runtime and grpo_web have no import cycle, an upward import seeded into grpo_runtime's graph breaks its
contract, and docs/architecture.{md,svg} are what scripts/architecture.py draws from the code today.
(tests/schema/test_architecture.py runs lint-imports itself, and seeds a real file of a copy of grpo_schema.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.schema.test_architecture import import_cycles

importlinter = pytest.importorskip("importlinter", reason="import-linter is in the test extra")
grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter")

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("grpo_schema", "grpo_runtime", "grpo_web")


@pytest.fixture(scope="module")
def options():
    from importlinter.application.use_cases import read_user_options
    from importlinter.configuration import configure

    configure()
    return read_user_options(str(REPO / "pyproject.toml"))


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*PACKAGES, include_external_packages=True, exclude_type_checking_imports=True)


def contract_results(options, graph) -> dict[str, bool]:
    """Every contract of pyproject.toml checked on `graph`: id -> kept."""
    from copy import deepcopy

    from importlinter.application.use_cases import _get_built_in_contract_types

    types = dict(_get_built_in_contract_types())
    results = {}
    for contract_options in options.contracts_options:
        contract = types[contract_options["type"]](name=contract_options["name"], session_options=options.session_options,
                                                   contract_options=contract_options)
        results[contract_options["id"]] = contract.check(deepcopy(graph), verbose=False).kept
    return results


def test_every_contract_is_kept(options, graph):
    results = contract_results(options, graph)
    assert {"runtime-layers"} <= set(results)
    assert all(results.values()), {name: kept for name, kept in results.items() if not kept}


@pytest.mark.parametrize("package", ["grpo_runtime", "grpo_web"])  # grpo_schema: tests/schema/test_architecture.py
def test_no_import_cycle(package):
    assert import_cycles(package) == []


@pytest.mark.parametrize("importer, imported, broken", [
    ("grpo_runtime.common", "grpo_runtime.train", "runtime-layers"),  # the leaf imports the recipe
    ("grpo_runtime.generation.rollout", "grpo_runtime.support.fields", "runtime-layers"),  # a stage, the table
    ("grpo_runtime.training.loss", "grpo_runtime.launch.cli", "runtime-layers"),
])
def test_a_seeded_upward_import_breaks_its_contract(options, graph, importer, imported, broken):
    from copy import deepcopy

    seeded = deepcopy(graph)
    seeded.add_import(importer=importer, imported=imported)
    results = contract_results(options, seeded)
    assert results[broken] is False
    assert contract_results(options, graph)[broken] is True


def test_the_architecture_page_and_picture_match_the_code():
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "architecture.py"), "--check"], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr

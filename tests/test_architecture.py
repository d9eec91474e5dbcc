"""The layers the folders show are the layers the code has: every import-linter contract of pyproject.toml holds,
grpo_runtime and grpo_web have no import cycle, an upward import seeded into grpo_runtime's graph breaks its
contract, and docs/architecture.{md,svg} are what scripts/architecture.py draws from the code today.
(tests/schema/test_architecture.py runs lint-imports itself, and seeds a real file of a copy of grpo_schema.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.imports import import_cycles

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
        contract = types[contract_options["type"]](
            name=contract_options["name"], session_options=options.session_options, contract_options=contract_options
        )
        results[contract_options["id"]] = contract.check(deepcopy(graph), verbose=False).kept
    return results


def test_every_contract_is_kept(options, graph):
    results = contract_results(options, graph)
    assert {"runtime-layers", "web-runs-below-routes", "web-routes-below-app"} <= set(results)
    assert all(results.values()), {name: kept for name, kept in results.items() if not kept}


@pytest.mark.parametrize("package", ["grpo_runtime", "grpo_web"])  # grpo_schema: tests/schema/test_architecture.py
def test_no_import_cycle(package):
    assert import_cycles(package) == []


@pytest.mark.parametrize(
    "importer, imported, broken",
    [
        ("grpo_runtime.common", "grpo_runtime.train", "runtime-layers"),  # the leaf imports the recipe
        ("grpo_runtime.generation.rollout", "grpo_runtime.support.fields", "runtime-layers"),  # a stage, the table
        ("grpo_runtime.training.loss", "grpo_runtime.launch.cli", "runtime-layers"),
        ("grpo_web.runs.store", "grpo_web.api.runs", "web-runs-below-routes"),  # the store reaches up into a route
        ("grpo_web.api.check", "grpo_web.app", "web-routes-below-app"),
    ],
)
def test_a_seeded_upward_import_breaks_its_contract(options, graph, importer, imported, broken):
    from copy import deepcopy

    seeded = deepcopy(graph)
    seeded.add_import(importer=importer, imported=imported)
    results = contract_results(options, seeded)
    assert results[broken] is False
    assert contract_results(options, graph)[broken] is True


@pytest.mark.parametrize(
    "path, names",
    [
        (
            "grpo_schema",
            [
                "check_file",
                "check_text",
                "check_mapping",
                "CheckResult",
                "Override",
                "GRPORunConfig",
                "Diagnostic",
                "Fix",
                "RunPlan",
                "derive_plan",
                "TrlArgs",
                "TrlUnavailableError",
            ],
        ),
        ("grpo_schema.cli", ["main"]),
        ("grpo_schema.compiled", ["compiled"]),
        ("grpo_schema.explain", ["explain_result"]),
        ("grpo_schema.export", ["export_schema", "with_modeline", "schema_text"]),
        ("grpo_schema.hardware", ["register_accelerator"]),
        ("grpo_schema.profiles", ["Profile", "get_profile"]),
        ("grpo_runtime.train", ["main"]),
        ("grpo_runtime.support", ["assess", "enforce", "CannotRun"]),
        ("grpo_runtime.reward_library", ["target_word_reward", "accuracy_reward", "think_format_reward"]),
        ("grpo_runtime.memprobe", ["main"]),
    ],
)
def test_the_public_import_paths_still_work(path, names):
    """What the README, interface.md and users' configs name keeps importing from where it always did."""
    import importlib

    module = importlib.import_module(path)
    assert [name for name in names if not hasattr(module, name)] == []


def test_the_worker_entry_and_the_module_commands_run():
    for argv in (
        ["-m", "grpo_schema", "codes", "GRPO-B001"],
        ["-m", "grpo_runtime", "--help"],
        ["-m", "grpo_runtime.memprobe", "--help"],
    ):
        done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120, cwd=REPO)
        assert done.returncode == 0, (argv, done.stderr[-2000:])

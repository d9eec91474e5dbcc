"""The layers the folders show are the layers the code has: the import-linter contracts of pyproject.toml hold, no
package has an import cycle, a seeded upward import breaks a contract, and docs/architecture.{md,svg} are what
scripts/architecture.py draws from the code today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


def test_lint_imports_passes():
    run = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                          "sys.exit(lint_imports_command())"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def test_every_contract_is_kept(options, graph):
    results = contract_results(options, graph)
    assert {"runtime-layers"} <= set(results)
    assert all(results.values()), {name: kept for name, kept in results.items() if not kept}


def cycles(graph, package: str) -> list[list[str]]:
    """Strongly connected components of more than one module among `package`'s modules (Tarjan, iterative)."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    edges = {m: sorted(i for i in graph.find_modules_directly_imported_by(m) if i in set(modules)) for m in modules}
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = counter[0]
                counter[0] += 1
                stack.append(node)
                on_stack.add(node)
            for offset, target in enumerate(edges[node][position:], start=position):
                if target not in index:
                    work.append((node, offset + 1))
                    work.append((target, 0))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(graph, package):
    assert cycles(graph, package) == []


def test_the_cycle_search_finds_a_seeded_cycle(graph):
    from copy import deepcopy

    seeded = deepcopy(graph)
    seeded.add_import(importer="grpo_runtime.common", imported="grpo_runtime.training.optim")  # optim imports common
    assert any("grpo_runtime.common" in component for component in cycles(seeded, "grpo_runtime"))


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

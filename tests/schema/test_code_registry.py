"""One code registry (grpo_schema.catalogue): every code declared once, in a module the registry imports, reachable
from a fresh interpreter by every surface that lists codes, and named by at least one test or fixture."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from grpo_schema.catalogue import DECLARING_MODULES, all_codes
from grpo_schema.cli import main

REPO = Path(__file__).resolve().parents[2]
DECLARERS = {"declare", "rule", "health_rule", "doctor_rule"}  # the functions and decorators that declare a code
CODE = re.compile(r"GRPO-[A-Z]\d{3}")


def declarations() -> list[tuple[str, str]]:
    """(code, module) for every code written as the first argument of a declaring call, in every package."""
    found = []
    for package in ("grpo_schema", "grpo_runtime", "web"):
        for path in sorted((REPO / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "GRPO-" not in text:  # most modules: no need to parse them
                continue
            tree = ast.parse(text)
            module = ".".join(path.relative_to(REPO).with_suffix("").parts).replace("web.", "grpo_web.", 1)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                    and CODE.fullmatch(node.args[0].value)
                    and getattr(node.func, "id", getattr(node.func, "attr", None)) in DECLARERS
                ):
                    found.append((node.args[0].value, module))
    return found


def test_a_fresh_interpreter_gives_sarif_the_catalogue_grpo_codes_lists(capsys):
    script = (
        "import json; from grpo_schema.render.sarif import sarif_log; "
        "print(json.dumps([r['id'] for r in sarif_log([])['runs'][0]['tool']['driver']['rules']]))"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    sarif = json.loads(done.stdout)
    assert main(["codes"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert sarif == listed
    assert len(listed) > 190 and {code[5] for code in listed} >= set("YKTBGLIVRPMOSWEDXHUAC")


def test_every_code_is_declared_once_in_a_module_the_registry_imports():
    found = declarations()
    codes = [code for code, _ in found]
    assert sorted(code for code in set(codes) if codes.count(code) > 1) == []
    assert set(codes) == set(all_codes())
    declaring = {module for _, module in found}
    assert sorted(declaring - set(DECLARING_MODULES)) == [], "add these to grpo_schema.catalogue.DECLARING_MODULES"
    assert sorted(set(DECLARING_MODULES) - declaring) == [], "these declare no code any more"


def test_every_code_is_named_by_a_test_or_a_fixture():
    named: set[str] = set()
    for path in (REPO / "tests").rglob("*"):
        if path.is_file() and path.suffix in (".py", ".yaml", ".yml", ".json", ".txt", ".toml", ".jsonl"):
            named |= set(CODE.findall(path.read_text(encoding="utf-8", errors="replace")))
    assert sorted(set(all_codes()) - named) == []


def test_the_docs_name_only_declared_codes():
    catalogue = all_codes()
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        unknown = sorted(set(CODE.findall(path.read_text(encoding="utf-8"))) - set(catalogue))
        assert unknown == [], f"{path.relative_to(REPO)} names codes nobody declares"


def test_codes_explains_one_code_and_refuses_an_unknown_one(capsys):
    code, info = next(iter(all_codes().items()))  # (this file names no code: the check above counts on it)
    assert main(["codes", code[5:].lower()]) == 0
    assert capsys.readouterr().out.startswith(f"{code} ({info.severity}): {info.title}\n\n{info.explanation}")
    assert main(["codes", "Z999"]) == 2
    assert "unknown code Z999" in capsys.readouterr().err

"""SARIF 2.1.0 output (`grpo validate --format sarif`), for GitHub code scanning and other SARIF viewers.

One run; its tool lists every code of the catalogue as a rule (`grpo codes`), and each diagnostic becomes a result
at the key's line and column. GitHub needs a region on every result, so a diagnostic without a position (an empty
file) points at line 1. `partialFingerprints` identify a finding across runs by file, code and keys, not by its
message, whose numbers change as the user edits.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from grpo_schema.engine.check import CheckResult
from grpo_schema.render.machine import dumps

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/grpo-config/grpo-config"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def code_catalogue() -> dict[str, Any]:
    """Every declared code (grpo_schema.catalogue: the list `grpo codes` prints)."""
    from grpo_schema.catalogue import all_codes

    return all_codes()


def _rule(info: Any) -> dict[str, Any]:
    from grpo_schema.engine.codes import AREAS

    name = "".join(word.capitalize() for word in re.findall(r"[A-Za-z0-9]+", info.title))
    help_text = f"{info.explanation}\n\nRun `grpo codes {info.code}` for this explanation."
    return {
        "id": info.code,
        "name": name,
        "shortDescription": {"text": info.title},
        "fullDescription": {"text": info.explanation},
        "help": {"text": help_text, "markdown": help_text},
        "defaultConfiguration": {"level": LEVELS[info.severity]},
        "properties": {"tags": ["grpo-config", AREAS.get(info.code[5:6], "other")]},
    }


def artifact_uri(path: str) -> tuple[str, str | None]:
    """(uri, uriBaseId) of a file as the command line named it: relative paths stay relative to the checkout."""
    if path in ("-", "<stdin>"):
        return "stdin", None
    pure = PurePath(path)
    if pure.is_absolute():
        return "file://" + quote(pure.as_posix()), None
    return quote(pure.as_posix().removeprefix("./")), "%SRCROOT%"


def _fingerprint(path: str, code: str, fields: tuple[str, ...]) -> str:
    return hashlib.sha256("\0".join((path, code, *fields)).encode("utf-8")).hexdigest()[:32]


def _result(result: CheckResult, diag: Any, rule_index: dict[str, int]) -> dict[str, Any]:
    from grpo_schema.render.notebooks import in_file

    path, line, column, prefix = in_file(result.path, diag.line, diag.column)
    uri, base = artifact_uri(path)
    location: dict[str, Any] = {"uri": uri}
    if base:
        location["uriBaseId"] = base
    text = prefix + diag.message + (f" ({diag.hint})" if diag.hint else "")
    out: dict[str, Any] = {
        "ruleId": diag.code,
        "level": LEVELS[diag.severity],
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": {"startLine": line or 1, "startColumn": column or 1},
                }
            }
        ],
        "partialFingerprints": {"grpoConfigFinding/v1": _fingerprint(result.path, diag.code, tuple(diag.fields))},
        "properties": {"fields": list(diag.fields), "hint": diag.hint, "fix": diag.fix.to_dict() if diag.fix else None},
    }
    if diag.code in rule_index:
        out["ruleIndex"] = rule_index[diag.code]
    return out


def sarif_log(results: list[CheckResult]) -> dict[str, Any]:
    from grpo_schema import __version__

    catalogue = code_catalogue()
    rule_index = {code: i for i, code in enumerate(catalogue)}
    driver = {
        "name": "grpo-config",
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": INFORMATION_URI,
        "rules": [_rule(info) for info in catalogue.values()],
    }
    findings = [_result(r, d, rule_index) for r in results for d in r.diagnostics]
    run = {
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": True}],
        "results": findings,
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render_sarif(results: list[CheckResult]) -> str:
    return dumps(sarif_log(results), indent=2, ensure_ascii=False) + "\n"

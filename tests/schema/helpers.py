"""Small helpers for the schema tests."""

from __future__ import annotations

from grpo_schema import check_text
from grpo_schema.engine.check import CheckResult


def check(yaml_text: str, **options) -> CheckResult:
    return check_text(yaml_text, path="test.yaml", **options)


def codes(result: CheckResult, severity: str | None = None) -> list[str]:
    return [d.code for d in result.diagnostics if severity is None or d.severity == severity]


def only(result: CheckResult, code: str):
    found = [d for d in result.diagnostics if d.code == code]
    assert len(found) == 1, f"expected one {code}, got {[d.to_dict() for d in result.diagnostics]}"
    return found[0]

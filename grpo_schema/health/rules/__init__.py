"""The run-health rules: small named functions over a RunHistory, each with a stable code in area A, one module
per area. A rule yields HealthFindings; docs/health.md has each code with an example, its threshold and why.

AREAS is the one list of the modules that declare rules (a code registry imports them from here); importing this
package registers every rule, in this order.
"""

from __future__ import annotations

import importlib

from grpo_schema.health.findings import HealthFinding
from grpo_schema.health.history import RunHistory
from grpo_schema.health.rules.base import HEALTH_RULES, HealthRule, health_rule
from grpo_schema.health.settings import HealthSettings

AREAS = tuple(
    f"grpo_schema.health.rules.{area}" for area in ("rewards", "completions", "optimisation", "policy", "run")
)
for _module in AREAS:
    importlib.import_module(_module)


def run_health_rules(history: RunHistory, settings: HealthSettings) -> list[HealthFinding]:
    out: list[HealthFinding] = []
    for item in HEALTH_RULES:
        out.extend(item.fn(history, settings))
    return out


__all__ = ["AREAS", "HEALTH_RULES", "HealthRule", "health_rule", "run_health_rules"]

"""Every diagnostic code, from one list of the modules that declare them.

A code is declared where it is decided: `declare()` in grpo_schema.engine.codes and a few engine modules, `@rule`
beside a config rule, `@health_rule` beside a run-health rule, `@doctor_rule` beside an environment rule. Importing
a module declares its codes, so the catalogue is whole only once every declaring module is imported: all_codes()
imports them from DECLARING_MODULES, and `grpo codes`, SARIF's rule catalogue, the language server's hover and the
docs' tests all read it. A new declaring module is one line below (tests/schema/test_code_registry.py finds any
module left out). Above the engine, health and doctor, below every surface that reads it.
"""

from __future__ import annotations

import importlib

from grpo_schema.engine.codes import CODES, CodeInfo

DECLARING_MODULES = (
    "grpo_schema.engine.codes",  # the loader, key, type and runtime (U) codes, and the doctor's letter table
    "grpo_schema.engine.env",
    "grpo_schema.engine.hardware.fit_codes",
    "grpo_schema.engine.policy_codes",
    "grpo_schema.engine.profiles.open_r1",
    "grpo_schema.engine.rules.batch",
    "grpo_schema.engine.rules.data",
    "grpo_schema.engine.rules.deprecated",
    "grpo_schema.engine.rules.distributed",
    "grpo_schema.engine.rules.generation",
    "grpo_schema.engine.rules.importance_sampling",
    "grpo_schema.engine.rules.loss",
    "grpo_schema.engine.rules.model",
    "grpo_schema.engine.rules.output",
    "grpo_schema.engine.rules.precision",
    "grpo_schema.engine.rules.rewards",
    "grpo_schema.engine.rules.vllm",
    "grpo_schema.health.rules.rewards",
    "grpo_schema.health.rules.completions",
    "grpo_schema.health.rules.optimisation",
    "grpo_schema.health.rules.policy",
    "grpo_schema.health.rules.run",
    "grpo_schema.health.rundir",
    "grpo_schema.doctor.context",
    "grpo_schema.doctor.release_rules",
    "grpo_schema.doctor.feature_rules",
    "grpo_schema.doctor.rules",
    "grpo_schema.dialects.python.codes",
    "grpo_schema.dialects.verl.codes",
    "grpo_schema.dialects.verl.rules.parse_time.batches",
    "grpo_schema.dialects.verl.rules.parse_time.workers",
    "grpo_schema.dialects.verl.rules.cluster",
    "grpo_schema.dialects.verl.rules.lints",
)


_imported: list[bool] = []


def all_codes() -> dict[str, CodeInfo]:
    """Every declared code, sorted, whatever was imported before (a plugin's rules included, once imported)."""
    if not _imported:
        for module in DECLARING_MODULES:
            importlib.import_module(module)
        _imported.append(True)
    return dict(sorted(CODES.items()))

"""The shared base of the parameter-area classes."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class AreaParams(BaseModel):
    """Field-only mixin. Frozen: the config is never mutated after loading; derived values live in the RunPlan."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        allow_inf_nan=False,
        coerce_numbers_to_str=True,
        validate_default=False,
        protected_namespaces=(),
        # Area classes only group fields; only the composed config (and dataset entries) are ever built.
        defer_build=True,
    )

    area: ClassVar[str] = ""
    title: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    # Field name -> {allowed value -> what it means}: editors show these per value (grpo_schema.commands.export).
    value_docs: ClassVar[dict[str, dict[Any, str]]] = {}

"""ConfigView: the validated config as a frozen object with attribute access, like the pydantic model it mirrors.

Validation produces plain values (grpo_schema.compiled); rules, the runtime and the service read them through
this view: `config.num_generations`, `config.datasets[0].path`, `config.model_dump(mode="json")`. `to_model()`
builds the real GRPORunConfig when a caller needs pydantic itself.
"""

from __future__ import annotations

import copy
from typing import Any, Iterator


class ConfigView:
    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any], facts: dict[str, dict[str, Any]] | None = None):
        """`facts` (grpo_schema.compiled) says which fields hold nested models, which become views too."""
        converted = {}
        for name, value in values.items():
            inner = (facts or {}).get(name, {}).get("nested")
            if inner and isinstance(value, list):
                value = [ConfigView(item, inner) if isinstance(item, dict) else item for item in value]
            elif inner and isinstance(value, dict):
                value = ConfigView(value, inner)
            converted[name] = value
        object.__setattr__(self, "_values", converted)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"config has no field {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError("the validated config is frozen; derive a new mapping and validate it instead")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConfigView) and self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]  (holds dicts and lists)

    def __repr__(self) -> str:
        return f"ConfigView({len(self._values)} fields)"

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return iter(self._values.items())

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """A deep copy as plain values (JSON-compatible already; `mode` kept for pydantic compatibility)."""
        return {name: _dump(value) for name, value in self._values.items()}

    def to_model(self) -> Any:
        from grpo_schema.config import GRPORunConfig

        return GRPORunConfig.model_validate(self.model_dump(), context={})


def _dump(value: Any) -> Any:
    if isinstance(value, ConfigView):
        return value.model_dump()
    if isinstance(value, list):
        return [_dump(item) for item in value]
    return copy.deepcopy(value)

"""ConfigView: the validated config as a frozen object with attribute access, like the pydantic model it mirrors.

Validation produces plain values (grpo_schema.engine.compiled); rules, the runtime and the service read them through
this view: `config.num_generations`, `config.datasets[0].path`, `config.model_dump(mode="json")`. `to_model()`
builds the real GRPORunConfig when a caller needs pydantic itself.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Iterator

# Builds the Pydantic model from a view's values. The engine never imports its Pydantic API (which is built on the
# engine): grpo_schema's __init__, above both, installs the builder, and importing any engine module runs it first.
_model_builder: Callable[[dict[str, Any]], Any] | None = None


def set_model_builder(builder: Callable[[dict[str, Any]], Any]) -> None:
    global _model_builder
    _model_builder = builder


class ConfigView:
    # The fields live in the instance __dict__, so `config.name` is a plain attribute lookup in C: rules read
    # ~150 fields per check, and a Python __getattr__ cost ~0.6 us each. No field name may shadow a method here
    # (tests/schema/test_fields.py holds the compiled models to that).

    def __init__(
        self, values: dict[str, Any], nested: dict[str, dict[str, Any]] | None = None, *, owned: bool = False
    ) -> None:
        """`nested` maps the fields that hold nested models to their own nested maps (CompiledModel.nested);
        those values become views too. `owned`: `values` is a new dict nobody else holds (a validator's answer),
        so the view keeps it rather than a copy."""
        converted = values if owned else dict(values)
        for name, inner in (nested or {}).items():
            value = converted.get(name)
            if isinstance(value, list):
                converted[name] = [ConfigView(item, inner) if isinstance(item, dict) else item for item in value]
            elif isinstance(value, dict):
                converted[name] = ConfigView(value, inner)
        object.__setattr__(self, "__dict__", converted)

    @property
    def _values(self) -> dict[str, Any]:
        return self.__dict__

    def __getattr__(self, name: str) -> Any:  # only reached when the field does not exist
        raise AttributeError(f"config has no field {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError("the validated config is frozen; derive a new mapping and validate it instead")

    __delattr__ = __setattr__  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConfigView) and self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]  # it holds dicts and lists

    def __repr__(self) -> str:
        return f"ConfigView({len(self._values)} fields)"

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return iter(self._values.items())

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """A deep copy as plain values (JSON-compatible already; `mode` kept for pydantic compatibility)."""
        return {name: _dump(value) for name, value in self._values.items()}

    def to_model(self) -> Any:
        """The GRPORunConfig of these values (already checked by the engine that produced the view)."""
        if _model_builder is None:
            raise RuntimeError("no model builder installed: import grpo_schema first")
        return _model_builder(self.model_dump())


def _dump(value: Any) -> Any:
    if isinstance(value, ConfigView):
        return value.model_dump()
    if isinstance(value, list):
        return [_dump(item) for item in value]
    return copy.deepcopy(value)

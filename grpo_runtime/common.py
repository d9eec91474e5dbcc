"""The bottom of grpo_runtime: what every stage may import, and nothing it must not.

`CannotRun` is the one exception for a valid config this runtime will not run (exit 3). The rest are the types
the field table (grpo_runtime.support) is written in, so that a stage can state its own limits beside the code
they describe and the table can import them from there. Nothing here imports torch or another grpo_runtime module.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

Category = Literal["honoured", "refused", "warned", "ignored"]
CATEGORIES: tuple[Category, ...] = ("honoured", "refused", "warned", "ignored")
Command = Literal["train", "launch", "service"]


class CannotRun(ValueError):
    """A valid config this runtime cannot run as written (exit 3). Raised by `enforce`, and by the few checks that
    need what only loading reveals (the model's architecture, the dataset's columns)."""


@dataclass(frozen=True)
class Setting:
    """What the predicates see: the validated config, the launch keys and how the run is being started."""

    config: Any  # grpo_schema ConfigView
    launch: dict[str, Any] = field(default_factory=dict)
    world_size: int = 1  # the processes the run asks for (declared, or the launch's)
    command: Command = "train"
    running: int = 1  # processes actually started (WORLD_SIZE under a launcher; 1 for `grpo train`)

    def get(self, name: str) -> Any:
        return self.launch.get(name) if name in LAUNCH_KEYS else getattr(self.config, name)


@dataclass(frozen=True)
class Limit:
    """A condition under which the runtime refuses (or warns about) a field's value."""

    when: Callable[[Setting], bool] | None  # None: the field is set to anything but its default
    message: str | Callable[[Setting], str]
    hint: str
    code: str
    refuse: bool = True  # False: a warning; the run goes ahead


@dataclass(frozen=True)
class Support:
    category: Category
    note: str  # where it is honoured, or why it is refused / warned about / ignored
    limits: tuple[Limit, ...] = ()


def honoured(where: str, *limits: Limit) -> Support:
    return Support("honoured", where, limits)


def refused(reason: str, hint: str, code: str, when: Callable[[Setting], bool] | None = None) -> Support:
    return Support("refused", reason, (Limit(when, reason, hint, code),))


def warned(reason: str, code: str, when: Callable[[Setting], bool] | None = None) -> Support:
    return Support("warned", reason, (Limit(when, reason, "", code, refuse=False),))


def ignored(reason: str) -> Support:
    return Support("ignored", reason)


def refuse_if(when: Callable[[Setting], bool] | None, message, hint: str, code: str) -> Limit:
    return Limit(when, message, hint, code)


def warn_if(when: Callable[[Setting], bool] | None, message, code: str) -> Limit:
    return Limit(when, message, "", code, refuse=False)


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def field_defaults(model: str) -> dict[str, Any]:
    from grpo_schema.engine.compiled import compiled

    return {name: facts.get("default") for name, facts in compiled(model).fields.items()}


LAUNCH_KEYS = frozenset(field_defaults("launch"))

"""The run backends by name: `local` (processes of this machine, grpo_web.runs.local), `slurm` (batch jobs,
grpo_web.runs.slurm), `ray` (Ray jobs, grpo_web.runs.rayjobs), and any other a deployment registers. The cluster
ones drive the cluster backend of the same name (grpo_runtime.clusters.backends) through grpo_web.runs.cluster,
imported only when a run is checked, submitted or followed, so importing them all here costs nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from grpo_web.runs.backend import RunBackend
from grpo_web.runs.local import LocalBackend
from grpo_web.runs.rayjobs import RayBackend
from grpo_web.runs.slurm import SlurmBackend

if TYPE_CHECKING:
    from grpo_web.runs.settings import RunsSettings

Factory = Callable[["RunsSettings"], RunBackend]

_REGISTRY: dict[str, Factory] = {"local": LocalBackend, "slurm": SlurmBackend, "ray": RayBackend}


def register(name: str, factory: Factory) -> None:
    """Make `factory(settings)` the backend called `name` (GRPO_WEB_RUNS_BACKEND=name)."""
    _REGISTRY[name] = factory


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def names() -> list[str]:
    return sorted(_REGISTRY)


def backend(name: str, settings: RunsSettings) -> RunBackend:
    """The backend called `name`, built for `settings`; ValueError naming the registered ones when none is."""
    found = _REGISTRY.get(name)
    if found is None:
        raise ValueError(f"no run backend called {name!r}; the registered ones are {', '.join(names())}")
    return found(settings)

"""The cluster backends by name: `grpo launch FILE --NAME` submits through the one called NAME, `grpo NAME ...`
follows its jobs, and the service's run backend of that name (grpo_web.runs.cluster) drives the same one
(grpo_runtime.clusters.backend). Ray itself is imported only when a cluster is asked."""

from __future__ import annotations

from grpo_runtime.clusters.backend import ClusterBackend
from grpo_runtime.clusters.ray.backend import RayBackend
from grpo_runtime.clusters.slurm.backend import SlurmBackend

BACKENDS: dict[str, type[ClusterBackend]] = {"slurm": SlurmBackend, "ray": RayBackend}


def register(backend: type[ClusterBackend]) -> None:
    """Make `backend` the cluster called backend.name, for `grpo launch --NAME` and the service's runs."""
    BACKENDS[backend.name] = backend


def unregister(name: str) -> None:
    BACKENDS.pop(name, None)


def backend(name: str) -> ClusterBackend:
    """The cluster backend called `name`; KeyError when none is."""
    return BACKENDS[name]()


def chosen(argv: list[str]) -> ClusterBackend | None:
    """The backend whose flag (`--slurm`, `--ray ADDRESS`, `--ray=ADDRESS`) the command line gives, or None."""
    for name, found in BACKENDS.items():
        if any(item == f"--{name}" or item.startswith(f"--{name}=") for item in argv):
            return found()
    return None

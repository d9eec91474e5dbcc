"""The cluster backends by name: `grpo launch FILE --NAME` submits through the one called NAME, and `grpo NAME ...`
follows its jobs (grpo_runtime.clusters.backend). Ray itself is imported only when a cluster is asked."""

from __future__ import annotations

from grpo_runtime.clusters.backend import ClusterBackend
from grpo_runtime.clusters.ray.cli import RayBackend
from grpo_runtime.clusters.slurm.cli import SlurmBackend

BACKENDS: dict[str, type[ClusterBackend]] = {"slurm": SlurmBackend, "ray": RayBackend}


def chosen(argv: list[str]) -> ClusterBackend | None:
    """The backend whose flag (`--slurm`, `--ray ADDRESS`, `--ray=ADDRESS`) the command line gives, or None."""
    for name, backend in BACKENDS.items():
        if any(item == f"--{name}" or item.startswith(f"--{name}=") for item in argv):
            return backend()
    return None

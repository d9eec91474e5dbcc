"""Where a run goes on a Ray cluster, decided before anything is submitted (`grpo launch --ray`, the service's Ray
backend).

The run is split into the fewest accelerate machines of equal size (accelerate runs as many processes on every
machine) whose bundles the cluster's live nodes hold, a bundle being a machine's processes' CPUs and GPUs on one
node. A config that generates through a vLLM server it does not name (the open-r1 layout) gets one more bundle,
for `trl vllm-serve`. A cluster that does not answer (GRPO-U011) or cannot hold the bundles (GRPO-U012) is a coded
refusal: a job it cannot place would wait forever. Ray is imported only to ask the cluster for its nodes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from grpo_schema.engine.codes import U_RAY_UNPLACEABLE, U_RAY_UNREACHABLE
from grpo_schema.engine.words import plural


@dataclass(frozen=True)
class Refused:
    """Why nothing was submitted: a coded diagnostic (GRPO-U011 / GRPO-U012) with what to do."""

    code: str
    message: str
    fix: str

    def __str__(self) -> str:
        return f"error[{self.code}] {self.message}\n  fix: {self.fix}"


@dataclass(frozen=True)
class Placement:
    """How a run sits on the cluster: `machines` accelerate machines of `per_machine` processes, each one bundle
    of per_machine x (cpus, gpus), and the vLLM server's bundle when the config needs one."""

    machines: int
    per_machine: int
    cpus: float  # per process
    gpus: float
    server: dict | None = None  # server_for(), its GPUs decided

    def describe(self) -> str:
        text = (
            f"{plural(self.machines, 'machine')} x {plural(self.per_machine, 'process')} = world size "
            f"{self.machines * self.per_machine}, {self.cpus:g} CPU and {self.gpus:g} GPU per process"
        )
        if self.server:
            text += f", plus a vLLM server of {self.server['gpus']:g} GPU on port {self.server['port']}"
        return text


def server_for(config, python: str, gpus: int | None = None) -> dict | None:
    """The `trl vllm-serve` a config in the open-r1 layout generates through (vllm_mode: server, no
    vllm_server_base_url), as Slurm's vLLM node runs it; None when the config needs none. `gpus` None: decided by
    plan() (the tensor parallel size on a cluster with GPUs, else none)."""
    from grpo_runtime.clusters.slurm.layout import wants_vllm_server

    if not wants_vllm_server(config):
        return None
    port = int(getattr(config, "vllm_server_port", 8000) or 8000)
    revision = getattr(config, "model_revision", None)
    trl = str(Path(python).parent / "trl") if os.sep in python else "trl"  # beside the nodes' interpreter
    base = [
        trl,
        "vllm-serve",
        "--model",
        str(config.model_name_or_path),
        *(["--revision", str(revision)] if revision else []),
        "--host",
        "0.0.0.0",
        "--port",
        str(port),
        *(["--trust_remote_code"] if getattr(config, "trust_remote_code", False) else []),
    ]
    return {
        "base": base,
        "port": port,
        "cpus": 1.0,
        "gpus": gpus,
        "tensor_parallel": int(getattr(config, "vllm_tensor_parallel_size", 1) or 1),
        "timeout": float(getattr(config, "vllm_server_timeout", 240) or 240),
    }


def _sized(server: dict, cluster_has_gpus: bool) -> dict:
    """The server with its GPUs decided and its parallel sizes on its command line."""
    tp = server["tensor_parallel"]
    gpus = server["gpus"] if server["gpus"] is not None else (tp if cluster_has_gpus else 0)
    command = [*server["base"], "--tensor_parallel_size", str(tp), "--data_parallel_size", str(max(int(gpus) // tp, 1))]
    return {**server, "gpus": float(gpus), "command": command}


def nodes_of(address: str) -> list[dict] | str:
    """The cluster's live nodes and their total resources, or why it cannot be reached."""
    try:
        from ray.util.state import list_nodes

        nodes = list_nodes(
            address=address, filters=[("state", "=", "ALIVE")], timeout=20, raise_on_missing_output=False
        )
    except Exception as error:  # any failure to reach it is the diagnostic
        return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return [{"id": node.node_id, "ip": node.node_ip, "resources": dict(node.resources_total or {})} for node in nodes]


def holds(nodes: list[dict], bundles: list[tuple[float, float]]) -> bool:
    """Whether the (CPU, GPU) bundles fit the nodes, each on one node: the largest first, each on the first node
    with room (for bundles of one size this fills every node as far as it goes)."""
    room = [[n["resources"].get("CPU", 0.0), n["resources"].get("GPU", 0.0)] for n in nodes]
    for cpus, gpus in sorted(bundles, key=lambda b: (b[1], b[0]), reverse=True):
        for free in room:
            if free[0] + 1e-9 >= cpus and free[1] + 1e-9 >= gpus:
                free[0], free[1] = free[0] - cpus, free[1] - gpus
                break
        else:
            return False
    return True


def placement(
    nodes: list[dict], world: int, cpus: float, gpus: float, per_machine: int | None = None, server: dict | None = None
) -> Placement | None:
    """The fewest machines of equal size whose bundles (and the server's) the live nodes hold: the whole run on one
    node when one has room, else split over several."""
    extra = [(server["cpus"], server["gpus"])] if server else []
    sizes = [per_machine] if per_machine else [size for size in range(world, 0, -1) if world % size == 0]
    for size in sizes:
        if world % size == 0 and holds(nodes, [(size * cpus, size * gpus)] * (world // size) + extra):
            return Placement(world // size, size, cpus, gpus, server)
    return None


def plan(
    address: str,
    world: int,
    cpus: float,
    gpus: float | None,
    per_machine: int | None = None,
    server: dict | None = None,
) -> Placement | Refused:
    """Where the run would sit on the cluster now, or the coded reason it cannot be submitted."""
    nodes = nodes_of(address)
    if isinstance(nodes, str):
        return Refused(
            U_RAY_UNREACHABLE,
            f"no Ray cluster answers at {address} ({nodes}); nothing submitted",
            "start it (`ray start --head`) or give its dashboard address, e.g. http://HEAD:8265",
        )
    if not nodes:
        return Refused(U_RAY_UNREACHABLE, f"the Ray cluster at {address} has no live node", "start a node")
    with_gpus = any(n["resources"].get("GPU", 0) for n in nodes)
    if gpus is None:
        gpus = 1.0 if with_gpus else 0.0
    if cpus <= 0 and gpus <= 0:
        return Refused(
            U_RAY_UNPLACEABLE,
            "a process that asks for no CPU and no GPU cannot be placed",
            "give --cpus-per-process or --gpus-per-process above 0",
        )
    server = _sized(server, with_gpus) if server else None
    found = placement(nodes, world, cpus, gpus, per_machine, server)
    if found is not None:
        return found
    have = "; ".join(
        f"{n['ip']}: {n['resources'].get('CPU', 0):g} CPU, {n['resources'].get('GPU', 0):g} GPU" for n in nodes
    )
    total = [sum(n["resources"].get(name, 0) for n in nodes) for name in ("CPU", "GPU")]
    split = f"machines of {plural(per_machine, 'process')}" if per_machine else "any split into machines of equal size"
    served = f" and a vLLM server of {server['cpus']:g} CPU, {server['gpus']:g} GPU" if server else ""
    return Refused(
        U_RAY_UNPLACEABLE,
        f"world size {world} asks {world * cpus:g} CPU and {world * gpus:g} GPU ({cpus:g} CPU, "
        f"{gpus:g} GPU per process){served}, but the cluster's {plural(len(nodes), 'live node')} "
        f"{'has' if len(nodes) == 1 else 'have'} {have} "
        f"({total[0]:g} CPU, {total[1]:g} GPU in all) and hold no {split}; the job would wait "
        "forever, so nothing was submitted",
        "a smaller world size (the config is validated for it), fewer CPUs or GPUs per process, or more nodes",
    )

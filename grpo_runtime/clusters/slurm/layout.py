"""The shape of a Slurm job: how many nodes train, how many processes each runs, and the optional vLLM node.

World size (what the config is validated for) is nodes x processes per node. Each node runs one or more
*launchers* (srun tasks, `--tasks-per-node`), and every launcher is one accelerate "machine": accelerate sees
nodes x tasks_per_node machines of processes_per_node / tasks_per_node processes each. One launcher per node is
the normal case; several let a CPU node, or a test cluster of one node, play a multi-machine job.
With `use_vllm: true` and `vllm_mode: server` (and no `vllm_server_base_url`, which names a server that already
runs) one more node runs `trl vllm-serve` and the training nodes generate through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grpo_schema.engine.words import plural


class LayoutError(ValueError):
    """Options that do not make a job (world size, divisibility): refused before anything is written."""


@dataclass(frozen=True)
class Layout:
    nodes: int  # training nodes
    processes_per_node: int
    tasks_per_node: int = 1
    gpus_per_node: int = 0  # 0: CPU nodes, no GPU request
    vllm_server: bool = False  # one extra node runs `trl vllm-serve`
    vllm_tensor_parallel_size: int = 1

    @property
    def world_size(self) -> int:
        return self.nodes * self.processes_per_node

    @property
    def machines(self) -> int:
        """accelerate's num_machines: one per launcher."""
        return self.nodes * self.tasks_per_node

    @property
    def total_nodes(self) -> int:
        return self.nodes + (1 if self.vllm_server else 0)

    @property
    def vllm_data_parallel_size(self) -> int:
        return max(self.gpus_per_node // self.vllm_tensor_parallel_size, 1)

    def describe(self) -> str:
        text = (
            f"{plural(self.nodes, 'node')} x {plural(self.processes_per_node, 'process')} "
            f"= world size {self.world_size}"
            + (f", {self.tasks_per_node} launchers per node" if self.tasks_per_node > 1 else "")
        )
        return text + (", plus 1 vLLM server node" if self.vllm_server else "")


def wants_vllm_server(config: Any) -> bool:
    """Server-mode vLLM without a server of its own: the job brings one (the open-r1 layout)."""
    return (
        bool(getattr(config, "use_vllm", False))
        and getattr(config, "vllm_mode", None) == "server"
        and not getattr(config, "vllm_server_base_url", None)
    )


def plan_layout(
    launch: dict[str, Any],
    *,
    nodes: int | None = None,
    processes_per_node: int | None = None,
    tasks_per_node: int = 1,
    gpus_per_node: int = 0,
    vllm_server: bool = False,
    vllm_tensor_parallel_size: int = 1,
) -> Layout:
    """The job's layout from the options given, filling the others from the config's launch keys
    (`num_machines`, `num_processes`). Raises LayoutError with what to change."""
    declared = launch.get("num_processes")
    nodes = nodes if nodes is not None else launch.get("num_machines") or 1
    if processes_per_node is None:
        if gpus_per_node:
            processes_per_node = gpus_per_node
        elif declared:
            if declared % nodes:
                raise LayoutError(
                    f"num_processes {declared} in the config does not split over {nodes} nodes; "
                    "give --processes-per-node"
                )
            processes_per_node = declared // nodes
        else:
            processes_per_node = 1
    for name, value in (
        ("--nodes", nodes),
        ("--processes-per-node", processes_per_node),
        ("--tasks-per-node", tasks_per_node),
        ("--vllm-tensor-parallel-size", vllm_tensor_parallel_size),
    ):
        if value < 1:
            raise LayoutError(f"{name} must be at least 1 (got {value})")
    if gpus_per_node < 0:
        raise LayoutError(f"--gpus-per-node must be 0 or more (got {gpus_per_node})")
    if processes_per_node % tasks_per_node:
        raise LayoutError(
            f"--processes-per-node {processes_per_node} does not split into --tasks-per-node {tasks_per_node} launchers"
        )
    if gpus_per_node and processes_per_node > gpus_per_node:
        raise LayoutError(
            f"--processes-per-node {processes_per_node} is more than the {gpus_per_node} GPUs per "
            "node: one training process per GPU"
        )
    layout = Layout(nodes, processes_per_node, tasks_per_node, gpus_per_node, vllm_server, vllm_tensor_parallel_size)
    if declared and declared != layout.world_size:
        raise LayoutError(
            f"num_processes {declared} in the config, but the job has {layout.describe()}; "
            f"make them agree (num_processes is the world size over all training nodes)"
        )
    if vllm_server and gpus_per_node and gpus_per_node % vllm_tensor_parallel_size:
        raise LayoutError(
            f"--vllm-tensor-parallel-size {vllm_tensor_parallel_size} does not divide the "
            f"{gpus_per_node} GPUs of the vLLM node"
        )
    return layout

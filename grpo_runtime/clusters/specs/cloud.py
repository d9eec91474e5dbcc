"""SkyPilot and dstack tasks: every node runs the job's script, the node rank and the rank-0 address from the
variables each scheduler sets."""

from __future__ import annotations

from typing import Any

from grpo_runtime.clusters.specs.job import VOLUME, Job


# --- the targets -------------------------------------------------------------------------------------------------
def skypilot(job: Job) -> dict:
    layout = job.layout
    resources: dict[str, Any] = {}
    if job.gpus:
        resources["accelerators"] = f"{job.accelerator or 'H100'}:{job.gpus}"
    resources["ports"] = [job.port] + ([job.vllm_port] if layout.vllm_server else [])
    vllm_host = f'$(echo "$SKYPILOT_NODE_IPS" | sed -n {layout.nodes + 1}p)' if layout.vllm_server else None
    return {
        "name": job.name,
        "num_nodes": layout.total_nodes,
        "resources": resources,
        "workdir": ".",
        "envs": dict(job.env),
        "volumes": {VOLUME: job.args.volume},
        "setup": "pip install -e '.[runtime]'",
        "run": (
            'MAIN_IP=$(echo "$SKYPILOT_NODE_IPS" | head -n1)\n'
            + job.script("$SKYPILOT_NODE_RANK", '"$MAIN_IP"', vllm_host)
        ),
    }


def dstack(job: Job) -> dict:
    layout = job.layout
    spec: dict[str, Any] = {
        "type": "task",
        "name": job.name,
        "nodes": layout.total_nodes,
        "image": job.args.image,
        "env": [f"{k}={v}" for k, v in job.env.items()],
        "volumes": [{"name": job.args.volume, "path": VOLUME}],
        "retry": {"on_events": ["interruption", "error"]},
    }
    if job.gpus:
        spec["resources"] = {"gpu": f"{job.accelerator or 'H100'}:{job.gpus}", "shm_size": "24GB"}
    vllm_host = f'$(echo "$DSTACK_NODES_IPS" | sed -n {layout.nodes + 1}p)' if layout.vllm_server else None
    spec["commands"] = [
        "pip install -e '.[runtime]'",
        job.script("$DSTACK_NODE_RANK", '"$DSTACK_MASTER_NODE_IP"', vllm_host),
    ]
    return spec

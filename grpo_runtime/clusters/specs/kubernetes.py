"""Kubernetes objects for a run (`--k8s-form`): Kubeflow's PyTorchJob, Kubeflow Trainer's TrainJob, a JobSet,
or an indexed Job with its headless Service; every pod mounts the checkpoint volume and shared memory."""

from __future__ import annotations

from typing import Any

from grpo_runtime.clusters.specs.job import VOLUME, WORKDIR, Job

# The container the Kubeflow training operator fills in for a PyTorchJob (MASTER_ADDR, RANK, WORLD_SIZE), and the
# port name it reads MASTER_PORT from; the Kubeflow Trainer's torch runtime runs its trainer as the JobSet's "node"
# job (hostnames NAME-node-0-INDEX.NAME). A JobSet pod is JOBSET-REPLICATEDJOB-JOBINDEX-PODINDEX.SUBDOMAIN, an
# indexed Job's pod JOB-INDEX.SERVICE.
PYTORCH_CONTAINER, PYTORCH_PORT, TRAINER_JOB = "pytorch", "pytorchjob-port", "node"


def _container(job: Job, script: str, gpus: int, name: str = "trainer", port_name: str = "rendezvous") -> dict:
    container: dict[str, Any] = {
        "name": name,
        "image": job.args.image,
        "workingDir": WORKDIR,
        "command": ["bash", "-c", script],
        "env": [{"name": k, "value": v} for k, v in job.env.items()],
        "ports": [{"containerPort": job.port, "name": port_name}],
        "volumeMounts": [{"name": "checkpoints", "mountPath": VOLUME}, {"name": "shm", "mountPath": "/dev/shm"}],
    }
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}  # a Kubernetes quantity
    return container


def _pod(
    job: Job, script: str, restart: str = "OnFailure", extra: dict | None = None, container: dict | None = None
) -> dict:
    spec: dict[str, Any] = {
        "restartPolicy": restart,
        "containers": [container or _container(job, script, job.gpus)],
        "volumes": [
            {"name": "checkpoints", "persistentVolumeClaim": {"claimName": job.args.volume}},
            {"name": "shm", "emptyDir": {"medium": "Memory"}},
        ],
    }
    if job.accelerator:
        spec["nodeSelector"] = {"nvidia.com/gpu.product": job.accelerator}
    spec.update(extra or {})
    return {"metadata": {"labels": {"app": job.name}}, "spec": spec}


def pytorchjob(job: Job) -> list[dict]:
    """Kubeflow's PyTorchJob: a Master and nodes - 1 Workers (Worker i has RANK i + 1); the last serves vLLM."""
    layout = job.layout
    vllm_host = f"{job.name}-worker-{layout.total_nodes - 2}" if layout.vllm_server else None
    script = job.script("$((${RANK:-0}))", '"$MASTER_ADDR"', vllm_host)
    pod = _pod(job, script, container=_container(job, script, job.gpus, PYTORCH_CONTAINER, PYTORCH_PORT))
    replicas: dict[str, Any] = {"Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": pod}}
    if layout.total_nodes > 1:
        replicas["Worker"] = {"replicas": layout.total_nodes - 1, "restartPolicy": "OnFailure", "template": pod}
    return [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": job.name},
            "spec": {"runPolicy": {"backoffLimit": 10}, "pytorchReplicaSpecs": replicas},
        }
    ]


def trainjob(job: Job) -> list[dict]:
    """Kubeflow Trainer's TrainJob on the torch-distributed runtime: PET_NODE_RANK and PET_MASTER_ADDR per node."""
    layout = job.layout
    vllm_host = f"{job.name}-{TRAINER_JOB}-0-{layout.nodes}.{job.name}" if layout.vllm_server else None
    container = _container(job, job.script("$PET_NODE_RANK", '"$PET_MASTER_ADDR"', vllm_host), job.gpus)
    return [
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": job.name},
            "spec": {
                "runtimeRef": {"name": "torch-distributed"},
                "trainer": {
                    "image": job.args.image,
                    "command": container["command"],
                    "numNodes": layout.total_nodes,
                    "numProcPerNode": layout.processes_per_node or 1,
                    "env": container["env"],
                    **({"resourcesPerNode": container["resources"]} if job.gpus else {}),
                },
            },
        }
    ]


def _indexed(job: Job, pod: dict) -> dict:
    nodes = job.layout.total_nodes
    return {
        "completions": nodes,
        "parallelism": nodes,
        "completionMode": "Indexed",
        "backoffLimitPerIndex": 3,
        "template": pod,
    }


def jobset(job: Job) -> list[dict]:
    """A JobSet of one indexed Job ("node"); the JobSet makes the headless Service of its subdomain itself."""
    subdomain, layout = f"{job.name}-nodes", job.layout
    host = f"{job.name}-{TRAINER_JOB}-0-{{}}.{subdomain}"
    script = job.script(
        "$JOB_COMPLETION_INDEX", host.format(0), host.format(layout.nodes) if layout.vllm_server else None
    )
    pod = _pod(job, script, restart="Never")
    return [
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": job.name},
            "spec": {
                "network": {"enableDNSHostnames": True, "subdomain": subdomain},
                "failurePolicy": {"maxRestarts": 10},
                "replicatedJobs": [{"name": TRAINER_JOB, "replicas": 1, "template": {"spec": _indexed(job, pod)}}],
            },
        }
    ]


def indexed_job(job: Job) -> list[dict]:
    """A plain batch/v1 Job in Indexed mode and the headless Service that gives its pods their names."""
    service, layout = f"{job.name}-nodes", job.layout
    host = f"{job.name}-{{}}.{service}"
    script = job.script(
        "$JOB_COMPLETION_INDEX", host.format(0), host.format(layout.nodes) if layout.vllm_server else None
    )
    ports = [{"name": "rendezvous", "port": job.port}] + (
        [{"name": "vllm", "port": job.vllm_port}] if layout.vllm_server else []
    )
    headless = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": service},
        "spec": {"clusterIP": "None", "selector": {"app": job.name}, "ports": ports},
    }
    pod = _pod(job, script, restart="Never", extra={"subdomain": service})
    return [
        headless,
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": job.name}, "spec": _indexed(job, pod)},
    ]


K8S_WRITERS = {"pytorchjob": pytorchjob, "trainjob": trainjob, "jobset": jobset, "indexed-job": indexed_job}


def kubernetes(job: Job) -> list[dict]:
    return K8S_WRITERS[job.args.k8s_form](job)

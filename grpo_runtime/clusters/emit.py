"""`grpo launch --emit skypilot|dstack|kubernetes FILE`: a scheduler's task or manifest from the validated config.

The shape comes from the config, as for `grpo launch --slurm` (grpo_runtime.clusters.slurm.layout): training nodes
and processes per node from `num_machines` / `num_processes` and the declared `hardware:` (NODESxGPUSxACCELERATOR),
the accelerator type from `hardware:`, one extra node for `trl vllm-serve` when the config generates through a
server it does not name. Every training node runs `grpo launch` as one accelerate machine (machine rank = the
node's rank, the rank-0 node's address and the config's main_process_port as the rendezvous). Checkpoints go to
output_dir on a mounted volume; a restarted task goes on from the newest complete checkpoint found there.
The config is validated at the emitted world size before anything is printed; nothing is submitted.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
from pathlib import PurePosixPath
from typing import Any

import yaml

from grpo_runtime.clusters.slurm.layout import Layout, LayoutError, plan_layout, wants_vllm_server

TARGETS = ("skypilot", "dstack", "kubernetes")
K8S_FORMS = ("pytorchjob", "trainjob", "jobset", "indexed-job")
VOLUME = "/checkpoints"  # where the checkpoint volume is mounted in every target
WORKDIR = "/workspace"  # where the project and the config are in every node
DEFAULT_PORT = 29500
DONE_MARKER = ".grpo-training-done"  # in output_dir: the training has ended well, the vLLM node stops serving
# Scheduler names of the accelerators in grpo-config's catalogue (family before the memory size).
_GPU_NAMES = {"H100-PCIE": "H100", "H100-NVL": "H100-NVL", "RTX6000-ADA": "RTX6000-Ada", "A6000": "RTXA6000"}


def emit_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grpo launch --emit", description="Print a scheduler's task or manifest for a validated run."
    )
    parser.add_argument("file", help="the run config (YAML or JSON)")
    parser.add_argument("--emit", choices=TARGETS, required=True, help="the scheduler to write for")
    parser.add_argument(
        "--k8s-form",
        choices=K8S_FORMS,
        default="pytorchjob",
        help="the Kubernetes object (default pytorchjob: Kubeflow's PyTorchJob)",
    )
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--allow-env", dest="allow_env", action="append", default=[], metavar="NAME")
    parser.add_argument("--nodes", type=int, help="training nodes (default: from num_machines / hardware:)")
    parser.add_argument("--gpus-per-node", type=int, help="GPUs per node (default: from hardware:)")
    parser.add_argument(
        "--hardware",
        metavar="SPEC",
        help="the nodes and GPUs to write for, as hardware: says them (e.g. 2x8xH100-80GB); default: the config's",
    )
    parser.add_argument(
        "--image",
        default="nvcr.io/nvidia/pytorch:24.10-py3",
        help="container image (dstack, Kubernetes; SkyPilot runs on the cloud's image)",
    )
    parser.add_argument("--name", help="the job's name (default grpo-CONFIG)")
    parser.add_argument(
        "--volume",
        default="grpo-checkpoints",
        help="the checkpoint volume (name of a SkyPilot/dstack volume or a Kubernetes PVC)",
    )
    parser.add_argument("--output", "-o", help="write the spec to this file instead of printing it")
    return parser


def hardware_of(raw: Any, given: str | None = None) -> tuple[int, int, str | None]:
    """(nodes, GPUs per node, scheduler accelerator name) from `given` (--hardware) or the config's `hardware:`;
    (0, 0, None) if absent."""
    from grpo_schema.engine.hardware.accelerators import HardwareError, parse_hardware

    spec = given or (raw.get("hardware") if isinstance(raw, dict) else None)
    if isinstance(spec, dict):
        spec = spec.get("spec") or spec.get("gpus")
    if not isinstance(spec, str):
        return 0, 0, None
    try:
        hardware = parse_hardware(spec)
    except HardwareError as error:
        if given:  # the config's own hardware: is judged by the validator; a typed one is refused here
            raise LayoutError(f"--hardware {given!r}: {error}") from error
        return 0, 0, None
    if hardware.accelerator.peak_tflops is None:  # a plain memory size names no GPU type
        return hardware.nodes, hardware.gpus_per_node, None
    family = hardware.accelerator.name.upper().rpartition("-")[0] or hardware.accelerator.name
    return hardware.nodes, hardware.gpus_per_node, _GPU_NAMES.get(family, family)


def plan(
    declared, nodes: int | None, gpus_per_node: int | None, hardware: str | None = None
) -> tuple[Layout, str | None]:
    hw_nodes, hw_gpus, accelerator = hardware_of(declared.raw, hardware)
    gpus = gpus_per_node if gpus_per_node is not None else hw_gpus
    server = wants_vllm_server(declared.config)
    launch = dict(declared.launch)
    if nodes is None and not launch.get("num_machines"):
        world = launch.get("num_processes")
        if world and gpus:
            nodes = max(world // gpus, 1)
        elif hw_nodes:
            nodes = max(hw_nodes - (1 if server and hw_nodes > 1 else 0), 1)
    if launch.get("num_processes") and gpus and nodes and launch["num_processes"] < nodes * gpus:
        processes = launch["num_processes"] // nodes  # fewer processes than GPUs: the rest serve vLLM (colocate TP)
        return plan_layout(
            launch, nodes=nodes, processes_per_node=processes, gpus_per_node=gpus, vllm_server=server
        ), accelerator
    return plan_layout(launch, nodes=nodes, gpus_per_node=gpus or 0, vllm_server=server), accelerator


class Job:
    """Everything the targets share: the layout, the command each node runs, the environment."""

    def __init__(self, args, result, layout: Layout, accelerator: str | None):
        self.layout, self.accelerator, self.args = layout, accelerator, args
        self.name = (args.name or f"grpo-{PurePosixPath(args.file).stem}").lower().replace("_", "-")[:50]
        self.config_name = PurePosixPath(args.file).name
        self.port = int(result.launch.get("main_process_port") or DEFAULT_PORT)
        self.output_dir = f"{VOLUME}/{self.name}"
        self.env = {str(k): str(v) for k, v in (result.env or {}).items()}
        config = result.config
        self.model = str(config.model_name_or_path)
        self.vllm_port = int(getattr(config, "vllm_server_port", 8000) or 8000)
        self.vllm_tp = int(getattr(config, "vllm_tensor_parallel_size", 1) or 1) if layout.vllm_server else 1
        self.overrides = [o for o in args.overrides if not o.startswith("output_dir=")]

    def train_command(self, rank: str, main_ip: str, vllm_host: str | None) -> str:
        """The shell line of one training node; rank, main_ip and vllm_host are shell expressions."""
        layout = self.layout
        words = ["grpo", "launch", shlex.quote(self.args.file), "--num-processes", str(layout.world_size)]
        if layout.nodes > 1:
            words += [
                "--num_machines",
                str(layout.nodes),
                "--machine_rank",
                rank,
                "--main_process_ip",
                main_ip,
                "--main_process_port",
                str(self.port),
            ]
        words += ["--set", shlex.quote(f"output_dir={self.output_dir}")]
        if vllm_host:
            words += ["--set", f'"vllm_server_host={vllm_host}"']
        for override in self.overrides:
            words += ["--set", shlex.quote(override)]
        for name in self.args.allow_env:
            words += ["--allow-env", shlex.quote(name)]
        words.append('"${RESUME[@]}"')
        return " ".join(words)

    def resume_lines(self) -> list[str]:
        """After a preemption the node starts again: go on from the newest complete checkpoint on the volume."""
        return [
            "RESUME=()",
            f'if compgen -G "{self.output_dir}/checkpoint-*/runtime_state.json" > /dev/null; then '
            "RESUME=(--set resume_from_checkpoint=true); fi",
        ]

    def vllm_command(self) -> str:
        return (
            f"trl vllm-serve --model {shlex.quote(self.model)} --tensor-parallel-size {self.vllm_tp} "
            f"--data-parallel-size {max(self.layout.gpus_per_node // self.vllm_tp, 1)} "
            f"--host 0.0.0.0 --port {self.vllm_port}"
        )

    def script(self, rank: str, main_ip: str, vllm_host: str | None) -> str:
        """The whole per-node script: the vLLM node (rank = training nodes) serves, the others train."""
        lines = ["set -euo pipefail", f"mkdir -p {self.output_dir}", *self.resume_lines()]
        train = self.train_command(rank, main_ip, vllm_host)
        if not self.layout.vllm_server:
            return "\n".join([*lines, f"exec {train}"]) + "\n"
        done = f"{self.output_dir}/{DONE_MARKER}"
        lines += [
            f'if [ "{rank}" -eq {self.layout.nodes} ]; then',
            "  # the vLLM node serves until the training leaves its marker on the volume (newer than this start)",
            "  STARTED=$(mktemp)",
            f"  {self.vllm_command()} &",
            "  SERVER=$!",
            '  while kill -0 "$SERVER" 2> /dev/null; do',
            f'    if [ "{done}" -nt "$STARTED" ]; then kill "$SERVER"; wait "$SERVER" || true; exit 0; fi',
            '    sleep "${GRPO_VLLM_POLL_S:-30}"',
            "  done",
            '  wait "$SERVER"',
            "fi",
            f'until curl -sf "http://{vllm_host}:{self.vllm_port}/health/" > /dev/null; do sleep 10; done',
            f"status=0; {train} || status=$?",
            f'if [ "$status" -eq 0 ] && [ "{rank}" -eq 0 ]; then touch "{done}"; fi  # the vLLM node may stop',
            'exit "$status"',
        ]
        return "\n".join(lines) + "\n"

    @property
    def gpus(self) -> int:
        return self.layout.gpus_per_node


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


class _Dumper(yaml.SafeDumper):
    """YAML as people write these files: every object spelled out (no &anchors), scripts as literal blocks."""

    def ignore_aliases(self, data) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, value: str):
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _text)


def emit(args, result, layout: Layout, accelerator: str | None) -> str:
    job = Job(args, result, layout, accelerator)
    if args.emit == "skypilot":
        return yaml.dump(skypilot(job), Dumper=_Dumper, sort_keys=False, width=120)
    if args.emit == "dstack":
        return yaml.dump(dstack(job), Dumper=_Dumper, sort_keys=False, width=120)
    return yaml.dump_all(kubernetes(job), Dumper=_Dumper, sort_keys=False, width=120)


def emit_command(argv: list[str]) -> int:
    args = emit_parser().parse_args(argv)
    from grpo_runtime.launch.checking import check
    from grpo_schema import check_file

    try:
        declared = check_file(args.file, overrides=args.overrides or None, allow_env=args.allow_env)
    except OSError as error:
        print(f"grpo: cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    try:
        layout, accelerator = plan(declared, args.nodes, args.gpus_per_node, args.hardware)
    except LayoutError as error:
        print(f"grpo launch --emit: error: {error}", file=sys.stderr)
        return 2
    with contextlib.redirect_stdout(sys.stderr):  # the check's report: stdout is the spec, for a pipe or a file
        result = check(args.file, args.overrides, layout.world_size, args.allow_env)
    if isinstance(result, int):
        return result
    text = emit(args, result, layout, accelerator)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"grpo: wrote {args.output} ({args.emit}: {layout.describe()})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0

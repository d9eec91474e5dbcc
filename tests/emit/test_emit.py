"""`grpo launch --emit`: every multi-node example gives a SkyPilot task, a dstack task and each Kubernetes form
that the tool's own library loads, and whose process arithmetic is the config's world size (training nodes x
processes per node, the vLLM server node not counted).

The Kubernetes client (the `emit` extra) loads the manifests in this interpreter. SkyPilot and dstack pin the
service's own dependencies (uvicorn, click), so they live in their own environment (scripts/setup-emit.sh makes
.venv-emit, or GRPO_EMIT_PYTHON names one); without it those two loaders skip, saying so."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from grpo_runtime.launch.emit import K8S_FORMS, emit_command
from grpo_schema import check_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
EMIT_PYTHON = Path(os.environ.get("GRPO_EMIT_PYTHON", ROOT / ".venv-emit" / "bin" / "python"))


def multi_node_examples() -> list[str]:
    """Examples whose job spans several nodes: num_machines > 1, or a declared hardware of several nodes."""
    names = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        hardware = str(data.get("hardware", ""))
        if (data.get("num_machines") or 1) > 1 or re.match(r"^\s*\d+\s*x\s*\d+\s*x", hardware, re.I) \
                or (data.get("vllm_mode") == "server" and not data.get("vllm_server_base_url")):
            names.append(path.name)
    return names


MULTI = multi_node_examples()


def test_the_examples_include_the_multi_node_layouts():
    assert {"multinode-zero3.yaml", "vllm-server-node.yaml", "open-r1.yaml"} <= set(MULTI)


def emitted(tmp_path: Path, name: str, target: str, *extra: str) -> Path:
    out = tmp_path / f"{Path(name).stem}-{target}{'-'.join(extra)}.yaml"
    code = emit_command([f"examples/{name}", "--emit", target, "--output", str(out), *extra])
    assert code == 0
    return out


def arithmetic(script: str) -> tuple[int, int | None]:
    """(--num-processes, --num_machines) of the training command in a node's script."""
    world = int(re.search(r"grpo launch \S+ --num-processes (\d+)", script).group(1))
    machines = re.search(r"--num_machines (\d+)", script)
    return world, int(machines.group(1)) if machines else None


def expected(name: str) -> tuple[int, bool]:
    declared = check_file(str(EXAMPLES / name))
    server = bool(declared.config.use_vllm) and declared.config.vllm_mode == "server" \
        and not declared.config.vllm_server_base_url
    return declared.world_size, server


def check_arithmetic(name: str, nodes: int, gpus_per_node: int, script: str) -> None:
    world, server = expected(name)
    training = nodes - (1 if server else 0)
    got, machines = arithmetic(script)
    assert got == world
    assert (machines or 1) == training
    assert world % training == 0 and world // training <= max(gpus_per_node, 1)
    if server:
        assert "trl vllm-serve" in script and f'-eq {training} ]' in script  # the last node serves, not trains
    if training > 1:
        assert "--machine_rank" in script and "--main_process_ip" in script and "--main_process_port" in script
    assert "resume_from_checkpoint=true" in script and "output_dir=/checkpoints/" in script


@pytest.mark.parametrize("name", MULTI)
@pytest.mark.parametrize("form", K8S_FORMS)
def test_kubernetes_forms_load_in_the_kubernetes_client(tmp_path, name, form):
    from kubernetes.client import ApiClient

    documents = list(yaml.safe_load_all(emitted(tmp_path, name, "kubernetes", "--k8s-form", form).read_text()))
    client = ApiClient()

    def load(data, kind):
        model = client._ApiClient__deserialize(json.loads(json.dumps(data)), kind)  # the client's typed loader
        assert type(model).__name__ == kind
        assert client.sanitize_for_serialization(model)  # a round trip through the typed model
        return model

    main = documents[-1]
    if form in ("jobset", "indexed-job"):
        service = load(documents[0], "V1Service")
        assert service.spec.cluster_ip == "None"
    if form == "indexed-job":
        job = load(main, "V1Job")
        nodes, pod = job.spec.completions, job.spec.template
        assert job.spec.completion_mode == "Indexed" and job.spec.parallelism == nodes
    elif form == "jobset":
        assert main["kind"] == "JobSet"
        replicated = main["spec"]["replicatedJobs"][0]
        job = load({"apiVersion": "batch/v1", "kind": "Job", "spec": replicated["template"]["spec"]}, "V1Job")
        nodes, pod = replicated["replicas"] * job.spec.completions, job.spec.template
    elif form == "pytorchjob":
        assert main["kind"] == "PyTorchJob"
        replicas = main["spec"]["pytorchReplicaSpecs"]
        nodes = sum(spec["replicas"] for spec in replicas.values())
        pods = [load(spec["template"], "V1PodTemplateSpec") for spec in replicas.values()]
        pod = pods[0]
    else:
        assert main["kind"] == "TrainJob"
        trainer = main["spec"]["trainer"]
        nodes = trainer["numNodes"]
        pod = load({"spec": {"containers": [{"name": "node", "image": trainer["image"],
                                              "command": trainer["command"], "env": trainer["env"],
                                              "resources": trainer.get("resourcesPerNode")}]}},
                   "V1PodTemplateSpec")
    container = pod.spec.containers[0]
    gpus = int((container.resources.limits or {}).get("nvidia.com/gpu", 0)) if container.resources else 0
    check_arithmetic(name, nodes, gpus, container.command[-1])


def run_loader(code: str, path: Path) -> dict:
    if not EMIT_PYTHON.exists():
        pytest.skip(f"SkyPilot and dstack are not installed ({EMIT_PYTHON} is missing: scripts/setup-emit.sh "
                    "makes it, or set GRPO_EMIT_PYTHON)")
    done = subprocess.run([str(EMIT_PYTHON), "-c", code, str(path)], capture_output=True, text=True, timeout=240,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


SKYPILOT = """
import json, sys
import sky
task = sky.Task.from_yaml(sys.argv[1])
resources = list(task.resources)[0]
accelerators = resources.accelerators or {}
print(json.dumps({"nodes": task.num_nodes, "gpus": sum(accelerators.values()), "run": task.run,
                  "accelerator": list(accelerators)}))
"""

DSTACK = """
import json, sys, yaml
from dstack._internal.core.models.configurations import parse_run_configuration
config = parse_run_configuration(yaml.safe_load(open(sys.argv[1])))
gpu = config.resources.gpu
count = gpu.count.min if gpu is not None else 0
print(json.dumps({"nodes": config.nodes, "gpus": count or 0, "run": "\\n".join(config.commands),
                  "accelerator": list(gpu.name or []) if gpu is not None else []}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", MULTI)
@pytest.mark.parametrize("target", ["skypilot", "dstack"])
def test_skypilot_and_dstack_tasks_load_in_their_own_library(tmp_path, name, target):
    loaded = run_loader(SKYPILOT if target == "skypilot" else DSTACK, emitted(tmp_path, name, target))
    assert loaded["accelerator"] == ["H100"]  # from hardware: NxH100-80GB
    check_arithmetic(name, loaded["nodes"], loaded["gpus"], loaded["run"])


def test_a_world_size_that_does_not_split_over_the_nodes_is_refused(tmp_path, capsys):
    code = emit_command(["examples/multinode-zero3.yaml", "--emit", "skypilot", "--nodes", "3"])
    assert code == 2
    assert "world size 15; make them agree" in capsys.readouterr().err

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

from grpo_runtime.clusters.emit import K8S_FORMS, emit_command
from grpo_schema import check_file
from tests.support.multi_node import EXAMPLES, MULTI

ROOT = Path(__file__).resolve().parents[2]
EMIT_PYTHON = Path(os.environ.get("GRPO_EMIT_PYTHON", ROOT / ".venv-emit" / "bin" / "python"))


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
    server = (
        bool(declared.config.use_vllm)
        and declared.config.vllm_mode == "server"
        and not declared.config.vllm_server_base_url
    )
    return declared.world_size, server


def check_arithmetic(name: str, nodes: int, gpus_per_node: int, script: str) -> None:
    world, server = expected(name)
    training = nodes - (1 if server else 0)
    got, machines = arithmetic(script)
    assert got == world
    assert (machines or 1) == training
    assert world % training == 0 and world // training <= max(gpus_per_node, 1)
    if server:
        assert "trl vllm-serve" in script and f"-eq {training} ]" in script  # the last node serves, not trains
    if training > 1:
        assert "--machine_rank" in script and "--main_process_ip" in script and "--main_process_port" in script
    assert "resume_from_checkpoint=true" in script and "output_dir=/checkpoints/" in script


def dropped(sent, loaded, path: str = "") -> list[str]:
    """Where `loaded` (a model's serialization) lost or changed what `sent` had: a key the model does not know
    is dropped by its loader, so a typo'd field would show here. Defaults the model adds are not differences."""
    if isinstance(sent, dict):
        if not isinstance(loaded, dict):
            return [path or "/"]
        return [
            lost
            for key, value in sent.items()
            if value is not None
            for lost in dropped(value, loaded.get(key), f"{path}.{key}")
        ]
    if isinstance(sent, list):
        if not isinstance(loaded, list) or len(loaded) != len(sent):
            return [path]
        return [lost for i, (a, b) in enumerate(zip(sent, loaded)) for lost in dropped(a, b, f"{path}[{i}]")]
    return [] if sent == loaded else [f"{path}: {sent!r} -> {loaded!r}"]


def hosts_named(form: str, documents: list[dict], layout_nodes: int) -> tuple[str, str | None]:
    """(the rendezvous host, the vLLM node's host) as each controller names its pods: an indexed Job's pod is
    JOB-INDEX.SUBDOMAIN, a JobSet's JOBSET-REPLICATEDJOB-JOBINDEX-PODINDEX.SUBDOMAIN, a TrainJob runs as the JobSet
    NAME with the replicated job "node" and subdomain NAME, a PyTorchJob's Worker i is NAME-worker-i."""
    main = documents[-1]
    name = main["metadata"]["name"]
    if form == "indexed-job":
        subdomain = main["spec"]["template"]["spec"]["subdomain"]
        assert documents[0]["metadata"]["name"] == subdomain  # the headless Service that gives the names
        return f"{name}-0.{subdomain}", f"{name}-{layout_nodes}.{subdomain}"
    if form == "jobset":
        replicated = main["spec"]["replicatedJobs"][0]["name"]
        subdomain = main["spec"]["network"]["subdomain"]
        assert main["spec"]["network"].get("enableDNSHostnames") is True
        return f"{name}-{replicated}-0-0.{subdomain}", f"{name}-{replicated}-0-{layout_nodes}.{subdomain}"
    if form == "trainjob":
        return '"$PET_MASTER_ADDR"', f"{name}-node-0-{layout_nodes}.{name}"
    workers = main["spec"]["pytorchReplicaSpecs"].get("Worker", {}).get("replicas", 0)
    return '"$MASTER_ADDR"', f"{name}-worker-{workers - 1}"


@pytest.mark.parametrize("name", MULTI)
@pytest.mark.parametrize("form", K8S_FORMS)
def test_kubernetes_forms_load_in_the_kubernetes_client(tmp_path, name, form):
    from kubernetes.client import ApiClient

    documents = list(yaml.safe_load_all(emitted(tmp_path, name, "kubernetes", "--k8s-form", form).read_text()))
    client = ApiClient()

    def load(data, kind):
        model = client._ApiClient__deserialize(json.loads(json.dumps(data)), kind)  # the client's typed loader
        assert type(model).__name__ == kind
        assert dropped(data, client.sanitize_for_serialization(model)) == []  # nothing the model does not know
        return model

    main = documents[-1]
    if form == "indexed-job":
        service = load(documents[0], "V1Service")
        assert service.spec.cluster_ip == "None"
        job = load(main, "V1Job")
        nodes, pod = job.spec.completions, job.spec.template
        assert job.spec.completion_mode == "Indexed" and job.spec.parallelism == nodes
    elif form == "jobset":
        assert [d["kind"] for d in documents] == ["JobSet"]  # its controller makes the headless Service
        replicated = main["spec"]["replicatedJobs"][0]
        job = load({"apiVersion": "batch/v1", "kind": "Job", "spec": replicated["template"]["spec"]}, "V1Job")
        nodes, pod = replicated["replicas"] * job.spec.completions, job.spec.template
    elif form == "pytorchjob":
        assert main["kind"] == "PyTorchJob"
        replicas = main["spec"]["pytorchReplicaSpecs"]
        nodes = sum(spec["replicas"] for spec in replicas.values())
        pods = [load(spec["template"], "V1PodTemplateSpec") for spec in replicas.values()]
        pod = pods[0]
        # the training operator sets MASTER_ADDR and RANK in the container named "pytorch" only
        assert all(p.spec.containers[0].name == "pytorch" for p in pods)
        assert pod.spec.containers[0].ports[0].name == "pytorchjob-port"
    else:
        assert main["kind"] == "TrainJob"
        trainer = main["spec"]["trainer"]
        nodes = trainer["numNodes"]
        pod = load(
            {
                "spec": {
                    "containers": [
                        {
                            "name": "node",
                            "image": trainer["image"],
                            "command": trainer["command"],
                            "env": trainer["env"],
                            "resources": trainer.get("resourcesPerNode"),
                        }
                    ]
                }
            },
            "V1PodTemplateSpec",
        )
    container = pod.spec.containers[0]
    gpus = int((container.resources.limits or {}).get("nvidia.com/gpu", 0)) if container.resources else 0
    script = container.command[-1]
    check_arithmetic(name, nodes, gpus, script)
    world, server = expected(name)
    main_host, vllm_host = hosts_named(form, documents, nodes - (1 if server else 0))
    if nodes - (1 if server else 0) > 1:
        assert f"--main_process_ip {main_host}" in script
    if server:
        assert f"vllm_server_host={vllm_host}" in script and f"http://{vllm_host}:" in script


def run_loader(code: str, path: Path):
    if not EMIT_PYTHON.exists():
        pytest.skip(
            f"SkyPilot, dstack and the Kubeflow models are not installed ({EMIT_PYTHON} is missing: scripts/setup-emit.sh "
            "makes it, or set GRPO_EMIT_PYTHON)"
        )
    done = subprocess.run(
        [str(EMIT_PYTHON), "-c", code, str(path)], capture_output=True, text=True, timeout=240, cwd=ROOT
    )
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


KUBEFLOW = """
import json, sys, yaml
from kubeflow.training.api_client import ApiClient
from kubeflow_trainer_api import models as trainer
out = []
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc["kind"] == "PyTorchJob":  # Kubeflow's training operator SDK (kubeflow-training)
        client = ApiClient()
        model = client._ApiClient__deserialize(doc, "KubeflowOrgV1PyTorchJob")
        back = client.sanitize_for_serialization(model)
        nodes = sum(spec.replicas for spec in model.spec.pytorch_replica_specs.values())
        container = model.spec.pytorch_replica_specs["Master"].template.spec.containers[0]
        gpus, script = (container.resources.limits or {}).get("nvidia.com/gpu", 0) if container.resources else 0, \\
            container.command[-1]
    elif doc["kind"] == "TrainJob":  # Kubeflow Trainer's API models (kubeflow-trainer-api)
        model = trainer.TrainerV1alpha1TrainJob.from_dict(doc)
        back = model.to_dict()
        resources = model.spec.trainer.resources_per_node
        nodes, script = model.spec.trainer.num_nodes, model.spec.trainer.command[-1]
        gpus = (resources.limits or {}).get("nvidia.com/gpu", 0) if resources else 0
    else:  # JobSet's models, as the Kubeflow Trainer ships them
        model = trainer.JobsetV1alpha2JobSet.from_dict(doc)
        back = model.to_dict()
        replicated = model.spec.replicated_jobs[0]
        job = replicated.template.spec
        container = job.template.spec.containers[0]
        nodes, script = replicated.replicas * job.completions, container.command[-1]
        gpus = (container.resources.limits or {}).get("nvidia.com/gpu", 0) if container.resources else 0
    gpus = getattr(gpus, "actual_instance", gpus)  # a quantity is a oneOf (string or number) in the Trainer's models
    out.append({"kind": type(model).__name__, "sent": doc, "back": json.loads(json.dumps(back, default=str)),
                "nodes": nodes, "gpus": int(float(gpus)), "run": script})
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", MULTI)
@pytest.mark.parametrize("form", ["pytorchjob", "trainjob", "jobset"])
def test_kubeflow_and_jobset_objects_load_in_their_own_models(tmp_path, name, form):
    (loaded,) = run_loader(KUBEFLOW, emitted(tmp_path, name, "kubernetes", "--k8s-form", form))
    assert (
        loaded["kind"]
        == {
            "pytorchjob": "KubeflowOrgV1PyTorchJob",
            "trainjob": "TrainerV1alpha1TrainJob",
            "jobset": "JobsetV1alpha2JobSet",
        }[form]
    )
    assert dropped(loaded["sent"], loaded["back"]) == []  # every field is one the model knows
    check_arithmetic(name, loaded["nodes"], loaded["gpus"], loaded["run"])


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

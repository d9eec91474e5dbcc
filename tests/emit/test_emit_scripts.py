"""What every node of an emitted spec runs, run by bash: each script of every target and Kubernetes form parses;
the open-r1 layout (a training node and a vLLM node) plays out on this machine with stand-ins for `trl`, `grpo`
and `curl` on PATH: the training node waits for the server, trains, marks the volume; the vLLM node then stops
serving (an old marker from a finished run does not stop it); a node that starts again after a preemption finds
the complete checkpoint on the volume and resumes from it."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from grpo_runtime.clusters.emit import K8S_FORMS, emit_command
from grpo_runtime.clusters.specs.job import DONE_MARKER, VOLUME
from tests.support.multi_node import MULTI

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash runs the nodes' scripts")


def scripts(path: Path) -> list[str]:
    """Every node script in an emitted file: SkyPilot's run, dstack's commands, each container's bash -c."""
    found = []

    def walk(value):
        if isinstance(value, dict):
            if isinstance(value.get("run"), str):
                found.append(value["run"])
            for key, item in value.items():
                if key == "command" and isinstance(item, list) and item[:2] == ["bash", "-c"]:
                    found.append(item[2])
                elif key == "commands" and isinstance(item, list):
                    found.extend(item[1:])
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for document in yaml.safe_load_all(path.read_text()):
        walk(document)
    return found


@pytest.mark.parametrize("name", MULTI)
def test_every_node_script_parses_in_bash(tmp_path, name):
    targets = [("skypilot", []), ("dstack", [])] + [("kubernetes", ["--k8s-form", f]) for f in K8S_FORMS]
    for target, extra in targets:
        out = tmp_path / f"{target}{''.join(extra)}.yaml"
        assert emit_command([f"examples/{name}", "--emit", target, "-o", str(out), *extra]) == 0
        found = scripts(out)
        assert found, (target, extra)
        for script in found:
            parsed = subprocess.run([BASH, "-n", "-c", script], capture_output=True, text=True, timeout=30)
            assert parsed.returncode == 0, (target, extra, parsed.stderr)


def stand_ins(folder: Path, record: Path) -> Path:
    """`trl` serves until it is killed, `curl` finds the server healthy, `grpo` records its arguments."""
    folder.mkdir()
    for name, body in {
        "trl": 'echo "trl $*" >> "%s"; exec sleep 300' % record,
        "curl": "exit 0",
        "grpo": 'echo "grpo $*" >> "%s"; exit "${GRPO_EXIT:-0}"' % record,
    }.items():
        path = folder / name
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return folder


@pytest.fixture
def open_r1_nodes(tmp_path):
    """The open-r1 SkyPilot task's run script with its volume in a temporary folder, and how to start a node."""
    out = tmp_path / "task.yaml"
    assert emit_command(["examples/open-r1.yaml", "--emit", "skypilot", "-o", str(out)]) == 0
    volume = tmp_path / "volume"
    run = yaml.safe_load(out.read_text())["run"].replace(VOLUME, str(volume))
    record = tmp_path / "calls.txt"
    path = stand_ins(tmp_path / "bin", record)

    def node(rank: int, **env: str) -> subprocess.Popen:
        environment = {
            **os.environ,
            "PATH": f"{path}:{os.environ['PATH']}",
            "SKYPILOT_NODE_RANK": str(rank),
            "SKYPILOT_NODE_IPS": "10.0.0.1\n10.0.0.2",
            "GRPO_VLLM_POLL_S": "0.2",
            **env,
        }
        return subprocess.Popen(
            [BASH, "-c", run], env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    return node, volume / "grpo-open-r1", record


def test_the_vllm_node_serves_until_the_training_node_is_done(open_r1_nodes):
    node, output, record = open_r1_nodes
    output.mkdir(parents=True)
    (output / DONE_MARKER).touch()  # left by an earlier run that finished: it must not stop this one
    os.utime(output / DONE_MARKER, (time.time() - 60, time.time() - 60))
    server = node(1)
    time.sleep(1.5)
    assert server.poll() is None, server.communicate()[0]  # still serving
    trainer = node(0)
    assert trainer.wait(60) == 0, trainer.communicate()[0]
    assert server.wait(30) == 0, server.communicate()[0]  # it saw the new marker and stopped its server
    calls = record.read_text().splitlines()
    assert calls[0].startswith("trl vllm-serve --model Qwen/Qwen2.5-1.5B-Instruct")
    (train,) = [c for c in calls if c.startswith("grpo launch")]
    assert "--num-processes 7" in train and "vllm_server_host=10.0.0.2" in train
    assert "resume_from_checkpoint" not in train  # nothing to resume from yet


def test_a_node_that_starts_again_resumes_from_the_checkpoint_on_the_volume(open_r1_nodes):
    node, output, record = open_r1_nodes
    (output / "checkpoint-40").mkdir(parents=True)
    (output / "checkpoint-40" / "runtime_state.json").write_text("{}")  # a complete checkpoint (preempted after)
    trainer = node(0, GRPO_EXIT="1")
    assert trainer.wait(60) == 1, trainer.communicate()[0]  # a failed training leaves no marker
    assert not (output / DONE_MARKER).exists()
    (train,) = [c for c in record.read_text().splitlines() if c.startswith("grpo launch")]
    assert train.endswith("--set resume_from_checkpoint=true")

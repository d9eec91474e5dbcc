"""Fixtures for the Slurm tests: a real one-node cluster (tests/slurm/cluster.py) for the module that asks for
it, and the demo (`grpo demo`) to submit. The cluster tests skip, saying why, only where Slurm's binaries (or
root, which slurmd needs) are missing; scripts/test.sh installs Debian's packages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.slurm.cluster import Cluster, why_unavailable
from tests.support.cli import grpo as grpo_command
from tests.support.env import OFFLINE_ENV

CHILD_ENV = {**OFFLINE_ENV, "GRPO_SLURM_POLL_S": "1"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Four CPU slots on the node: the time-limited job mostly waits for its limit while the others run."""
    reason = why_unavailable()
    if reason:
        pytest.skip(reason)
    started = Cluster(tmp_path_factory.mktemp("slurm"), cpus=4).start()
    saved = {name: os.environ.get(name) for name in (*started.env, *CHILD_ENV)}
    os.environ.update({**started.env, **CHILD_ENV})  # the CLI, the service and the jobs reach this cluster
    try:
        yield started
    finally:
        started.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """`grpo demo DIR`: the tiny model, the prompts and DIR/config.yaml."""
    pytest.importorskip("torch", reason="the demo trains with grpo_runtime, which needs torch")
    from grpo_runtime.launch.demo import write_demo

    return write_demo(tmp_path_factory.mktemp("demo"))


def grpo(*args: str, timeout: float = 300, cwd: Path | None = None):
    """The `grpo` command, as a user runs it (a process: the jobs it submits outlive it)."""
    return grpo_command(*args, timeout=timeout, cwd=cwd, subprocess=True)

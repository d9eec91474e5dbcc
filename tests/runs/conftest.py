"""Fixtures for the runs tests: a real `grpo serve --enable-runs` subprocess on a free port, a temp runs
directory with its SQLite file, and a tiny model and prompt set built locally (nothing is downloaded).

Runs are real: the service starts `grpo launch` (accelerate) in process groups of their own. Every test cleans
up the run processes it caused, even when it fails, so nothing trains on after the suite.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import httpx
import pytest
import yaml

pytest.importorskip("fastapi", reason="the runs tests need the web extra (pip install -e '.[web]')")

TOKEN = "test-token-" + "x" * 20
TARGET_REWARD = "grpo_runtime.data.reward_library.target_word_reward"
CHILD_ENV = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "TRANSFORMERS_VERBOSITY": "error",
             "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}  # one thread: 2 busy cores, tiny model


@dataclass(frozen=True)
class Assets:
    model: Path
    data: Path


@pytest.fixture(scope="session")
def assets(tmp_path_factory) -> Assets:
    """The tiny random-init model and the demo prompts (grpo_runtime.model.tiny / grpo_runtime.launch.demo)."""
    pytest.importorskip("torch", reason="runs train with grpo_runtime, which needs torch")
    from grpo_runtime.launch.demo import demo_rows
    from grpo_runtime.model.tiny import save_tiny_model

    root = tmp_path_factory.mktemp("assets")
    (root / "data").mkdir()
    with (root / "data" / "train.jsonl").open("w") as handle:
        for row in demo_rows():
            handle.write(json.dumps(row) + "\n")
    return Assets(save_tiny_model(root / "model"), root / "data")


def run_yaml(assets: Assets, **overrides) -> str:
    """A config for the demo task sized for a test: a handful of fast steps, a checkpoint every 2."""
    config = dict(model_name_or_path=str(assets.model), dataset_name=str(assets.data), reward_funcs=[TARGET_REWARD],
                  per_device_train_batch_size=8, num_generations=4, max_completion_length=4, loss_type="dapo",
                  beta=0.0, learning_rate=0.01, optim="adamw_torch", max_steps=6, save_steps=2, logging_steps=1,
                  seed=0, use_cpu=True, bf16=False, activation_checkpointing=False, report_to="none")
    config.update(overrides)
    return yaml.safe_dump({k: v for k, v in config.items() if v is not None}, sort_keys=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Service:
    """`python -m grpo_schema serve` with runs on, as an operator would start it."""

    runs_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    runs: bool = True
    process: subprocess.Popen | None = None
    port: int = 0
    output: list[Path] = field(default_factory=list)
    cwd: Path | None = None  # the folder `grpo serve` starts in (relative model and dataset paths are read there)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, port: int | None = None) -> "Service":
        """Start the service (on `port`: a restart where the browser's tabs are, else on a free port)."""
        self.port = port or free_port()
        log = self.runs_dir.parent / f"service-{len(list(self.runs_dir.parent.glob('service-*.log')))}.log"
        self.output.append(log)
        env = {**os.environ, **CHILD_ENV, "GRPO_WEB_TOKEN": TOKEN, "GRPO_WEB_RUNS_POLL_S": "0.2", **self.env}
        with log.open("wb") as handle:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "grpo_schema", "serve", "--port", str(self.port), "--runs-dir",
                 str(self.runs_dir), "--log-level", "warning", *(["--enable-runs"] if self.runs else [])],
                env=env, stdout=handle, stderr=subprocess.STDOUT, cwd=self.cwd)
        wait_for(self._healthy, 60, "the service to answer /healthz")
        return self

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"the service exited: {self.log_text()}")
        try:
            return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def log_text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in self.output if p.exists())

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)

    def client(self, token: str | None = TOKEN) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def launch(self, text: str, **params) -> dict:
        with self.client() as client:
            answer = client.post("/api/v1/runs", content=text, params=params,
                                 headers={"Content-Type": "application/yaml"})
        assert answer.status_code == 201, answer.text
        return answer.json()

    def run(self, run_id: str) -> dict:
        with self.client() as client:
            answer = client.get(f"/api/v1/runs/{run_id}")
        assert answer.status_code == 200, answer.text
        return answer.json()

    def wait_state(self, run_id: str, states: tuple[str, ...], timeout: float = 120) -> dict:
        found = {}

        def reached() -> bool:
            found.update(self.run(run_id))
            return found["state"] in states

        wait_for(reached, timeout, f"run {run_id} to be {'/'.join(states)}", lambda: self.run_log(run_id))
        return found

    def run_log(self, run_id: str) -> str:
        with self.client() as client:
            return client.get(f"/api/v1/runs/{run_id}/logs", params={"limit": 1 << 20}).text


def wait_for(predicate: Callable[[], bool], timeout: float, what: str, explain: Callable[[], str] = str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{explain()}")
        time.sleep(0.2)


def stop_runs(runs_dir: Path) -> None:
    """Kill what a test's runs left running (their groups, found from the wrapper's process.json)."""
    from grpo_web.runs import procs

    for record in runs_dir.glob("*/process.json"):
        found = json.loads(record.read_text())
        procs.signal_run(found.get("pid"), found.get("start_time"), signal.SIGKILL)


@pytest.fixture
def make_service(tmp_path):
    """Start services over one runs directory (each start is a restart of the same service)."""
    started: list[Service] = []
    runs_dir = tmp_path / "runs"

    def make(cwd: Path | None = None, **env: str) -> Service:
        service = Service(runs_dir, {k: str(v) for k, v in env.items()}, cwd=cwd).start()
        started.append(service)
        return service

    yield make
    for service in started:
        service.stop(signal.SIGKILL)
    stop_runs(runs_dir)

"""The live service, two ways: `grpo serve` as a process an operator starts (Service, with runs that really train),
and the app served by uvicorn in a thread of the test process (start_server, ThreadServer: real sockets and HTTP,
no process start)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support.env import OFFLINE_ENV, free_port, wait_for

TOKEN = "test-token-" + "x" * 20


class PortTaken(RuntimeError):
    """The service could not listen on its port: another process holds it."""


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
        """Start the service (on `port`: a restart where the browser's tabs are, else on a free port; another worker
        may take that port first, so a free port that turns out taken is replaced, twice at most)."""
        for attempt in range(3):
            try:
                return self._start(port or free_port())
            except PortTaken:
                if port or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _start(self, port: int) -> "Service":
        self.port = port
        log = self.runs_dir.parent / f"service-{len(list(self.runs_dir.parent.glob('service-*.log')))}.log"
        self.output.append(log)
        env = {**os.environ, **OFFLINE_ENV, "GRPO_WEB_TOKEN": TOKEN, "GRPO_WEB_RUNS_POLL_S": "0.2", **self.env}
        with log.open("wb") as handle:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "grpo_schema",
                    "serve",
                    "--port",
                    str(self.port),
                    "--runs-dir",
                    str(self.runs_dir),
                    "--log-level",
                    "warning",
                    *(["--enable-runs"] if self.runs else []),
                ],
                env=env,
                stdout=handle,
                stderr=subprocess.STDOUT,
                cwd=self.cwd,
            )
        wait_for(self._healthy, 60, "the service to answer /healthz", every=0.1)
        return self

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            log = self.log_text()
            raise (PortTaken if "address already in use" in log.lower() else RuntimeError)(f"the service exited: {log}")
        if not self._listening():  # a service of another worker may answer on the port meanwhile: not ours
            return False
        try:
            return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def _listening(self) -> bool:
        """Whether this service's own process listens on its port."""
        import psutil

        try:
            found = psutil.Process(self.process.pid).net_connections(kind="tcp")
        except psutil.Error:
            return False
        return any(c.status == psutil.CONN_LISTEN and c.laddr.port == self.port for c in found)

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
            answer = client.post(
                "/api/v1/runs", content=text, params=params, headers={"Content-Type": "application/yaml"}
            )
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


def stop_runs(runs_dir: Path) -> None:
    """Kill what a test's runs left running (their groups, found from the wrapper's process.json)."""
    from grpo_web.runs import procs

    for record in runs_dir.glob("*/process.json"):
        found = json.loads(record.read_text())
        procs.signal_run(found.get("pid"), found.get("start_time"), signal.SIGKILL)


@contextlib.contextmanager
def services(runs_dir: Path):
    """make(cwd=None, **env) -> a started Service over `runs_dir` (each start is a restart of the same service);
    on exit every one is killed and so are the runs they left."""
    started: list[Service] = []

    def make(cwd: Path | None = None, **env: str) -> Service:
        service = Service(runs_dir, {k: str(v) for k, v in env.items()}, cwd=cwd).start()
        started.append(service)
        return service

    try:
        yield make
    finally:
        for service in started:
            service.stop(signal.SIGKILL)
        stop_runs(runs_dir)


@dataclass
class LiveServer:
    url: str
    settings: object

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kwargs)


def start_server(settings):
    """The app for `settings` served by uvicorn in a thread on a free port: (server, thread, url), once healthy."""
    import uvicorn

    from grpo_web.app import create_app

    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True, name="uvicorn-under-test")
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    _wait_healthy(url)
    return server, thread, url


def _wait_healthy(url: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).json() == {"status": "ok"}:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url}/healthz never answered")


class ThreadServer:
    """A real uvicorn in a thread, on a fixed port so that it can be stopped and started again at the same URL."""

    def __init__(self, settings):
        self.settings = settings
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = self.thread = None

    def start(self) -> None:
        import uvicorn

        from grpo_web.app import create_app

        config = uvicorn.Config(create_app(self.settings), host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True, name="uvicorn-form-test")
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@contextlib.contextmanager
def offline_runs_server(runs_dir, token: str, **settings):
    """A live service in a thread with runs on, whose launched runs fail at once (offline: no model can be fetched)."""
    from grpo_web.settings import Settings

    saved_env = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "OMP_NUM_THREADS")}
    os.environ.update(HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    live = ThreadServer(Settings(runs=True, token=token, runs_dir=runs_dir, runs_poll_s=0.2, **settings))
    live.start()
    try:
        yield live
    finally:
        live.stop()
        stop_runs(runs_dir)
        for key, value in saved_env.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)

"""3. Service throughput and latency: POST /api/v1/validate on loopback at 1, 8 and 32 connections.

The server is the shipped command, `grpo serve` (uvicorn, one process, the real app), with --log-level warning so
the access log is off as an operator would run it under load. The load generator is a separate process
(benchmarks/loadgen.py). Server CPU time per request is read from /proc through psutil. A last run sends
GET /healthz at 32 connections: the same server with no validation work, the floor of the framework. Another
cycles through every example recipe at 32 connections (distinct bodies, from 30 to 60 lines): the mix a shared
team server sees, next to the one typical recipe the target is stated for.

The service keeps the answer of a body sent again (web/api/memo.py), so the rows above after their first request
are answered from it, as a form re-sending a recipe is. One more run at 32 connections makes every body new (a
comment no other request has), so each request is checked anew: the cost of the check itself.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request

import psutil

from benchmarks.common import BIN, EXAMPLES, PYTHON, REPO, child_env, run_json_child

CONNECTIONS = (1, 8, 32)
BODY_FILE = EXAMPLES / "dapo.yaml"  # a typical recipe (25 settings)
TARGET = {"connections": 32, "requests_per_s": 1000, "p99_ms": 25}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, extra_env: dict | None = None) -> subprocess.Popen:
    argv = [str(BIN / "grpo"), "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen(
        argv, cwd=REPO, env=child_env(**(extra_env or {})), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"grpo serve exited: {server.stderr.read().decode()[-2000:]}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("grpo serve did not answer /healthz within 60 s")


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def load(
    port: int,
    server: subprocess.Popen,
    connections: int,
    seconds: float,
    max_requests: int,
    body: str = str(BODY_FILE),
    unique: bool = False,
) -> dict:
    process = psutil.Process(server.pid)
    before = process.cpu_times()
    result = run_json_child(
        [
            PYTHON,
            "-m",
            "benchmarks.loadgen",
            str(port),
            str(connections),
            str(seconds),
            str(max_requests),
            body,
            *(["unique"] if unique else []),
        ],
        timeout=seconds + 60,
    )
    after = process.cpu_times()
    cpu = (after.user + after.system) - (before.user + before.system)
    result["server_cpu_ms_per_request"] = cpu * 1000 / max(result["requests"], 1)
    return result


def measure(seconds: float, max_requests: int, extra_env: dict | None = None) -> dict:
    port = free_port()
    server = start_server(port, extra_env)
    try:
        rows = [load(port, server, c, seconds, max_requests) for c in CONNECTIONS]
        checked_anew = load(port, server, TARGET["connections"], seconds, max_requests, unique=True)
        mix = load(port, server, TARGET["connections"], seconds, max_requests, body=str(EXAMPLES))
        floor = load(port, server, TARGET["connections"], seconds, max_requests, body="-")
    finally:
        stop_server(server)
    at_target = next(r for r in rows if r["connections"] == TARGET["connections"])
    met = at_target["requests_per_s"] >= TARGET["requests_per_s"] and at_target["p99_ms"] <= TARGET["p99_ms"]
    return {
        "body_file": BODY_FILE.name,
        "rows": rows,
        "checked_anew": checked_anew,
        "corpus_mix": mix,
        "healthz_floor": floor,
        "targets": {
            ">= 1000 req/s with p99 <= 25 ms at 32 connections": {
                "value": f"{at_target['requests_per_s']:.0f} req/s, p99 {at_target['p99_ms']:.1f} ms",
                "met": met,
            }
        },
    }

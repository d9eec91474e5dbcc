"""Child of benchmarks/against.py: the app of whichever checkout is first on sys.path, in-process (no sockets).

    python benchmarks/against_child.py BODY_FILE TRIALS PER_TRIAL

Standalone on purpose (the standard library and the app only): it runs inside an earlier commit's checkout, whose
benchmarks/ may differ. Every POST body ends in a comment no other request has, so no answer comes from the
answers the service keeps for a body sent again: each request is checked anew. Prints one JSON line: the least
CPU time per request over TRIALS batches of PER_TRIAL, for that POST and for GET /healthz (the framework floor).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from pathlib import Path

try:
    from grpo_web.app import create_app
    from grpo_web.settings import Settings
except ImportError:  # checkouts from before the service's package was named grpo_web
    from web.app import create_app
    from web.settings import Settings

COUNTER = itertools.count()


def scope(path: str, method: str, body: bytes) -> dict:
    headers = [
        (b"host", b"127.0.0.1"),
        (b"content-type", b"application/yaml"),
        (b"content-length", str(len(body)).encode()),
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }


async def request(app, path: str, method: str, body: bytes) -> None:
    if method == "POST":
        body += f"\n# request {next(COUNTER)}\n".encode()
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    await app(scope(path, method, body), receive, send)
    if sent[0]["status"] != 200:
        raise SystemExit(f"{method} {path} answered {sent[0]['status']}")


async def least_cpu_ms(app, path: str, method: str, body: bytes, trials: int, per_trial: int) -> float:
    for _ in range(per_trial):  # warm: imports, compiled validators, memo tables
        await request(app, path, method, body)
    best = float("inf")
    for _ in range(trials):
        started = time.process_time()
        for _ in range(per_trial):
            await request(app, path, method, body)
        best = min(best, (time.process_time() - started) * 1000 / per_trial)
    return best


async def main(body: bytes, trials: int, per_trial: int) -> dict:
    app = create_app(Settings())
    return {
        "validate_ms": await least_cpu_ms(app, "/api/v1/validate", "POST", body, trials, per_trial),
        "healthz_ms": await least_cpu_ms(app, "/healthz", "GET", b"", trials, per_trial),
    }


if __name__ == "__main__":
    body_file, trials, per_trial = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(asyncio.run(main(body_file.read_bytes(), trials, per_trial))))

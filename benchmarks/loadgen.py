"""Load generator (its own process): C keep-alive HTTP/1.1 connections POSTing one config, each request sent as
soon as the previous answer on that connection is read (closed loop). Bounded by time and by the count of
measured requests: the warm-up half second spends none of that count, so a fast server cannot use it all up
before measuring starts.

    python -m benchmarks.loadgen PORT CONNECTIONS SECONDS MAX_REQUESTS FILE|DIR|- [unique]

FILE is POSTed to /api/v1/validate; a DIR's *.yaml files are POSTed in turn (distinct bodies: each connection
cycles through them from its own starting point); `-` sends GET /healthz instead (the framework floor: no
validation work). With `unique`, every request's body ends in a comment no other request has (`# request C.N`),
so the service can never answer from the answers it keeps for bodies sent again: each request is checked anew.
Prints one JSON line: requests, errors, seconds, requests/s and latency percentiles (ms). A hand-written client on
asyncio streams, because httpx's per-request overhead would cost the server much of the 2 shared cores.
Loopback only: the host is fixed to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from pathlib import Path

from benchmarks.common import percentile

HOST = "127.0.0.1"
WARMUP_SECONDS = 0.5  # requests answered in the first half second are not counted (connection setup, caches)


def request_bytes(body: bytes | None) -> bytes:
    if body is None:
        return f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\nConnection: keep-alive\r\n\r\n".encode()
    head = (
        f"POST /api/v1/validate HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/yaml\r\n"
        f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n"
    )
    return head.encode() + body


async def read_response(reader: asyncio.StreamReader) -> int:
    """Read one response; return its status code."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
    length = int({k.lower(): v for k, v in headers.items()}.get("content-length", "0"))
    await reader.readexactly(length)
    return status


async def connection(
    port: int, bodies: list[bytes | None], until: float, budget: list[int], out: dict, unique: str | None = None
) -> None:
    payloads = [request_bytes(body) for body in bodies]
    reader, writer = await asyncio.open_connection(HOST, port)
    count_after = time.perf_counter() + WARMUP_SECONDS
    try:
        for sent in itertools.count():
            if budget[0] <= 0 or time.perf_counter() >= until:
                break
            counted = time.perf_counter() >= count_after
            budget[0] -= counted
            body = bodies[sent % len(bodies)]
            payload = (
                payloads[sent % len(payloads)]
                if unique is None or body is None
                else request_bytes(body + f"\n# request {unique}.{sent}\n".encode())
            )
            started = time.perf_counter()
            writer.write(payload)
            status = await read_response(reader)
            if counted:
                out["latencies"].append(time.perf_counter() - started)
                out["errors"] += status != 200
    finally:
        writer.close()


async def main(
    port: int, connections: int, seconds: float, max_requests: int, bodies: list[bytes | None], unique: bool = False
) -> dict:
    out = {"latencies": [], "errors": 0}
    start = time.perf_counter()
    until = start + WARMUP_SECONDS + seconds
    budget = [max_requests]
    await asyncio.gather(
        *(
            connection(
                port,
                rotated(bodies, i * len(bodies) // connections),
                until,
                budget,
                out,
                f"{time.time_ns()}.{i}" if unique else None,
            )
            for i in range(connections)
        )
    )
    measured = max(time.perf_counter() - start - WARMUP_SECONDS, 1e-9)
    latencies = sorted(x * 1000 for x in out["latencies"])
    if not latencies:
        raise SystemExit(f"no request was answered after the {WARMUP_SECONDS} s warm-up at {connections} connections")
    return {
        "connections": connections,
        "requests": len(latencies),
        "errors": out["errors"],
        "seconds": measured,
        "requests_per_s": len(latencies) / measured,
        "p50_ms": percentile(latencies, 50),
        "p90_ms": percentile(latencies, 90),
        "p99_ms": percentile(latencies, 99),
        "max_ms": latencies[-1] if latencies else float("nan"),
    }


def rotated(items: list, start: int) -> list:
    return items[start:] + items[:start]


def read_bodies(source: str) -> list[bytes | None]:
    if source == "-":
        return [None]
    path = Path(source)
    return [file.read_bytes() for file in sorted(path.glob("*.yaml"))] if path.is_dir() else [path.read_bytes()]


if __name__ == "__main__":
    port, conns, secs, cap, source = (
        int(sys.argv[1]),
        int(sys.argv[2]),
        float(sys.argv[3]),
        int(sys.argv[4]),
        sys.argv[5],
    )
    print(json.dumps(asyncio.run(main(port, conns, secs, cap, read_bodies(source), sys.argv[6:] == ["unique"]))))

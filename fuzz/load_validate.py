"""Bounded load on POST /api/v1/validate, checking every answer: run as its own process against a local service.

    python fuzz/load_validate.py http://127.0.0.1:8000 [--connections 32] [--seconds 10] [--max-requests 5000]

Each connection is a keep-alive HTTP/1.1 client that sends the next body as soon as the previous answer is read,
cycling through the corpus configs (../shared/grpo-corpus), a few hostile bodies and JSON copies. Before the load
starts, the expected answer of every body is computed here with grpo_schema (check_text / check_mapping): every
answer under load must be exactly that JSON, with status 200. Stops at --seconds or --max-requests, whichever
comes first. Prints one JSON summary (counts, requests/s, latency percentiles in ms); exit 1 on any 5xx, wrong
answer or broken connection. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "grpo-corpus"
HOSTILE = [
    b"a0: &a0 [x, x, x, x, x, x, x, x, x]\na1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\n",
    b"num_generations: 3\nper_device_train_batch_size: 4\n",
    b"env:\n  LD_PRELOAD: /tmp/x.so\n",
    b"- a\n",
    b"",
    b"\x00\xff",
    b"num_generation: 8\nlearning_rate: 1e-6\n",
    b"a: [" * 60 + b"]" * 60,
]


def bodies() -> list[tuple[bytes, str]]:
    """(body, content type) pairs: the corpus as YAML, the same mappings as JSON, hostile YAML."""
    from grpo_schema.engine.loader import load_yaml  # not yaml.safe_load: the corpus holds an alias bomb

    found = [(path.read_bytes(), "application/yaml") for path in sorted(CORPUS.glob("*/*.yaml"))]
    for text, _ in list(found):
        loaded = load_yaml(text)
        try:
            if loaded.ok and isinstance(loaded.data, dict):
                found.append((json.dumps(loaded.data, allow_nan=False).encode(), "application/json"))
        except (TypeError, ValueError):  # dates, NaN: YAML only
            continue
    return found + [(body, "application/yaml") for body in HOSTILE]


def expected_answer(body: bytes, content_type: str) -> object:
    """What the service must answer: grpo_schema's file object, serialized the way the service does."""
    from grpo_schema import check_mapping, check_text
    from grpo_web.api.responses import dumps
    from grpo_web.settings import Settings

    version, source = Settings().judged_trl()  # the release the service judges by when a request names none
    judged = {"trl_version": version, "trl_version_source": source}
    if content_type == "application/json":
        result = check_mapping(json.loads(body), path="<request>", **judged)
    else:
        result = check_text(body, path="<request>", **judged)
    return json.loads(dumps(result.to_dict()))


def request(host: str, body: bytes, content_type: str) -> bytes:
    head = (
        f"POST /api/v1/validate HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
    return int(head[0].split()[1]), await reader.readexactly(int(headers.get("content-length", "0")))


async def client(url: str, work: list, state: dict, until: float) -> None:
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        while state["left"] > 0 and time.perf_counter() < until:
            state["left"] -= 1
            payload, expected = work[state["next"] % len(work)]
            state["next"] += 1
            started = time.perf_counter()
            writer.write(payload)
            status, content = await answer(reader)
            state["latencies"].append(time.perf_counter() - started)
            state["status"][status] = state["status"].get(status, 0) + 1
            if status != 200 or json.loads(content) != expected:
                state["wrong"].append({"status": status, "answer": content[:300].decode("utf-8", "replace")})
    except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
        state["broken"].append(repr(exc))
    finally:
        writer.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else 0.0


async def run(url: str, connections: int, seconds: float, max_requests: int) -> dict:
    host = urlsplit(url).netloc
    work = [(request(host, body, kind), expected_answer(body, kind)) for body, kind in bodies()]
    state = {"left": max_requests, "next": 0, "latencies": [], "status": {}, "wrong": [], "broken": []}
    started = time.perf_counter()
    await asyncio.gather(*(client(url, work, state, started + seconds) for _ in range(connections)))
    elapsed = time.perf_counter() - started
    latencies = state["latencies"]
    return {
        "requests": len(latencies),
        "distinct_bodies": len(work),
        "connections": connections,
        "seconds": round(elapsed, 2),
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "latency_ms": {
            name: round(1000 * percentile(latencies, q), 1)
            for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))
        },
        "status": {str(k): v for k, v in sorted(state["status"].items())},
        "server_errors": sum(v for k, v in state["status"].items() if k >= 500),
        "wrong_answers": len(state["wrong"]),
        "first_wrong": state["wrong"][:1],
        "broken": state["broken"][:3],
    }


def loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--max-requests", type=int, default=5000)
    args = parser.parse_args(argv)
    if not loopback(args.url):
        parser.error("only a service on this machine (127.0.0.1 / localhost) may be loaded")
    sys.path.insert(0, str(ROOT))
    summary = asyncio.run(run(args.url, args.connections, args.seconds, args.max_requests))
    print(json.dumps(summary))
    failed = summary["server_errors"] or summary["wrong_answers"] or summary["broken"]
    return 1 if failed or summary["requests"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

"""Reading a config from a request body: size-limited while streaming, YAML text or a JSON object.

The limit is enforced on the bytes actually received, so a chunked body without Content-Length cannot grow past
it either. The body is never decoded here for YAML: grpo_schema's loader takes the bytes, exactly as the CLI does.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, HTTPException, Request

from grpo_schema.engine.loader import MAX_DEPTH, MAX_VALUES
from grpo_web.settings import Settings, current_settings

YAML_TYPES = frozenset({"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "text/plain"})
JSON_TYPES = frozenset({"application/json"})
ACCEPTED = ", ".join(sorted(YAML_TYPES | JSON_TYPES))


@dataclass(frozen=True)
class ConfigBody:
    """A request's config: raw YAML bytes, or an already parsed JSON object."""

    yaml: bytes | None = None
    mapping: dict[str, Any] | None = None


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


async def read_limited(request: Request, limit: int, timeout: float | None = None) -> bytes:
    """The whole body, or 413 as soon as more than `limit` bytes are announced or received, or 408 when it has not
    all arrived after `timeout` seconds (uvicorn waits for a body forever: one byte a second held a request open
    and a worker thread's share of the server indefinitely)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    try:
        return await asyncio.wait_for(_read_body(request, limit), timeout)
    except asyncio.TimeoutError:
        raise body_timeout(timeout) from None


def body_timeout(timeout: float) -> HTTPException:
    # Connection: close, so uvicorn drops the connection instead of reading the rest of the body.
    return HTTPException(408, f"the request body did not arrive within {timeout:g} s", headers={"Connection": "close"})


def _too_large(limit: int) -> HTTPException:
    # Connection: close, or uvicorn keeps reading (and discarding) the rest of the body, however long it is.
    return HTTPException(413, f"request body larger than {limit} bytes", headers={"Connection": "close"})


async def _read_body(request: Request, limit: int) -> bytes:
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        seen: set[str] = set()
        duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"duplicate key {duplicate!r}")
    return mapping


def parse_json_object(data: bytes) -> dict[str, Any]:
    """A JSON object, or 422 saying why not (syntax, NaN/Infinity, duplicate keys, not an object)."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except UnicodeDecodeError:
        raise HTTPException(422, "a JSON body must be UTF-8")
    except (ValueError, RecursionError) as exc:
        raise HTTPException(422, f"the body is not valid JSON: {exc}")
    if not isinstance(value, dict):
        raise HTTPException(422, f"a JSON body must be an object with config keys, not {_json_kind(value)}")
    problem = _shape_problem(value)
    if problem:
        raise HTTPException(422, f"the JSON body is not usable: {problem}")
    return value


def _json_kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def _shape_problem(value: Any) -> str:
    """Why a parsed JSON value is refused, or "": the YAML loader's bounds on depth and size, finite numbers only
    (1e999 parses to inf even without the Infinity constant)."""
    stack, count = [(value, 1)], 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        if count > MAX_VALUES:
            return f"more than {MAX_VALUES} values"
        if isinstance(item, float) and not math.isfinite(item):
            return "numbers must be finite"
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return ""


async def config_body(request: Request, settings: Settings = Depends(current_settings)) -> ConfigBody:
    """Dependency: the config in the body (415 for other content types, 413 when too large)."""
    kind = media_type(request)
    if kind not in YAML_TYPES and kind not in JSON_TYPES:
        shown = kind or "no Content-Type"
        raise HTTPException(415, f"unsupported content type {shown}; send one of {ACCEPTED}")
    data = await read_limited(request, settings.max_body_bytes, settings.body_timeout_s)
    if kind in JSON_TYPES:
        return ConfigBody(mapping=parse_json_object(data))
    return ConfigBody(yaml=data)

"""POST /api/v1/validate without FastAPI's routing and dependency machinery, for the requests that need none of it.

The route in web/api/check.py stays the one definition: it is documented in the OpenAPI schema and it serves every
request this lane passes on. The lane takes only the plain case, decided from the request line and headers before
any byte of the body is read: a YAML or JSON content type, a Content-Length within the limit, no chunked body, and
a query string of no other parameters than `world_size` (digits, within max_world_size) and `path` (1,000
characters at most), each once. Everything else (other methods, other content types, a missing or oversized length,
profiles, releases, hardware, allowed env names, anything a query validation would refuse) goes to the route
unchanged, so 413, 415 and 422 keep their one implementation.
What the lane answers is what the route would: the same check, the same JSON document, and for a body that stops
arriving or a JSON body that does not parse, the same exception through the same handler. It saves about half a
millisecond of CPU per request (dependency resolution, request parsing, routing), a quarter of the whole. A body
sent again with the same options gets the answer kept from the first time (web/api/memo.py), without a new check.

It sits inside the user middleware (CORS, the page headers), so those wrap its answers as they wrap the route's.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from grpo_schema import CheckResult
from grpo_web.api.body import JSON_TYPES, YAML_TYPES, ConfigBody, body_timeout, parse_json_object
from grpo_web.api.check import run_check
from grpo_web.api.errors import http_error
from grpo_web.api.memo import AnswerCache
from grpo_web.api.params import PATH_MAX_CHARS, CheckParams
from grpo_web.api.responses import ConfigJSONResponse
from grpo_web.api.service_reads import service_reads
from grpo_web.settings import Settings

PATH = "/api/v1/validate"
# Bodies up to this size are checked on the event loop, larger ones in the thread pool (a 1 MB body can take
# seconds and must not stall other connections). The bound keeps an inline check to ~30 ms even for a hostile
# body (2 KB of random keys, each getting a did-you-mean; docs/benchmarks.md, service).
INLINE_MAX_BYTES = 2048
_WORLD_SIZE = re.compile(r"[1-9][0-9]{0,8}")
# The only query parameters the lane reads; a request with any other goes to the route, which knows every one
# (an unknown name included: the route ignores it, and so the answer stays the route's).
_LANE_QUERY = frozenset({"world_size", "path"})


class FastValidate:
    """ASGI middleware: answer plain POST /api/v1/validate requests itself, pass everything else on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = _plain_request(scope) if scope["type"] == "http" and scope["path"] == PATH else None
        if request is None:
            await self.app(scope, receive, send)
            return
        try:
            response = await _answer(scope, receive, *request)
        except _Disconnected as gone:  # the route gets the same messages and does what it does with them
            replayed = gone.replay(receive)
        else:
            await response(scope, receive, send)
            return
        await self.app(scope, replayed, send)  # outside the except, so the route's errors are not chained to it


async def _answer(scope: Scope, receive: Receive, media_type: str, options: dict[str, Any]) -> Response:
    answers: AnswerCache = scope["app"].state.answers
    try:
        body = await _read_body(receive, scope["app"].state.settings.body_timeout_s)
        key = answers.key(body, media_type, options)
        kept = answers.get(key)
        if kept is not None:  # the same bytes were checked before: the same answer (web/api/memo.py)
            return Response(kept, media_type=ConfigJSONResponse.media_type)
        result = await _check(body, media_type, options, service_reads(Request(scope)))
    except HTTPException as refused:
        return await http_error(Request(scope, receive), refused)
    response = ConfigJSONResponse(result.to_dict())
    answers.put(key, bytes(response.body))
    return response


def _plain_request(scope: Scope) -> tuple[str, dict[str, Any]] | None:
    """(media type, check options) when the lane can answer this request exactly as the route would, else None."""
    if scope["method"] != "POST" or scope.get("root_path"):
        return None
    settings: Settings = scope["app"].state.settings
    content_type = length = None
    for name, value in scope["headers"]:
        if name == b"content-type" and content_type is None:  # the first one, as Starlette's Headers.get reads
            content_type = value
        elif name == b"content-length" and length is None:
            length = value
        elif name == b"transfer-encoding":
            return None
    if content_type is None or length is None or not length.isdigit() or int(length) > settings.max_body_bytes:
        return None
    media_type = content_type.decode("latin-1").split(";", 1)[0].strip().lower()
    if media_type not in YAML_TYPES and media_type not in JSON_TYPES:
        return None
    options = _query_options(scope["query_string"], settings)
    return None if options is None else (media_type, options)


def _query_options(query: bytes, settings: Settings) -> dict[str, Any] | None:
    """check_text's options from the query, or None when it holds anything the lane leaves to the route."""
    version, source = settings.judged_trl()
    options: dict[str, Any] = {
        "path": "<request>",
        "world_size": None,
        "profiles": (),
        "trl_version": version,
        "trl_version_source": source,
    }
    if not query:
        return options
    params = QueryParams(query)  # decoded exactly as the route decodes it
    if not set(params.keys()) <= _LANE_QUERY:  # profiles, releases, hardware, allowed env names: the route's
        return None
    for key in _LANE_QUERY:
        values = params.getlist(key)
        if len(values) > 1:
            return None
        if values:
            options[key] = values[0]
    if options["world_size"] is not None:
        if not _WORLD_SIZE.fullmatch(options["world_size"]) or int(options["world_size"]) > settings.max_world_size:
            return None
        options["world_size"] = int(options["world_size"])
    if len(options["path"]) > PATH_MAX_CHARS:
        return None
    return options


class _Disconnected(Exception):
    """The client went away before the whole body arrived; holds what was received so far."""

    def __init__(self, messages: list[Message]):
        self.messages = messages

    def replay(self, receive: Receive) -> Receive:
        pending = list(self.messages)

        async def replayed() -> Message:
            return pending.pop(0) if pending else await receive()

        return replayed


async def _read_body(receive: Receive, timeout: float) -> bytes:
    try:
        return await asyncio.wait_for(_receive_all(receive), timeout)
    except asyncio.TimeoutError:
        raise body_timeout(timeout) from None


async def _receive_all(receive: Receive) -> bytes:
    # Content-Length is known and within the limit here, and the server never passes on more than it announced.
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            raise _Disconnected(messages)
        if not message.get("more_body", False):
            return b"".join(m.get("body", b"") for m in messages)


async def _check(body: bytes, media_type: str, options: dict[str, Any], reads: Any) -> CheckResult:
    """The route's check (grpo_web.api.check.run_check) on the raw body, with the route's reads for a memory fit."""
    config = ConfigBody(mapping=parse_json_object(body)) if media_type in JSON_TYPES else ConfigBody(yaml=body)
    return await run_check(config, CheckParams(**options), inline=len(body) <= INLINE_MAX_BYTES, reads=reads)

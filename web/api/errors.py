"""Error responses: every refusal is a 4xx with a `detail`; a 500 only for a real bug, and it is logged.

Bad input never reaches the catch-all: the body and query dependencies answer 413/415/422 first, and grpo_schema
turns every problem in a config into a diagnostic (status 200). The fuzz tests hold that line.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

log = logging.getLogger("web")


async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """The answer to an HTTPException (also for grpo_web.api.fastlane, which answers outside the routes)."""
    headers = getattr(exc, "headers", None)
    if exc.status_code == 405:  # Starlette names only the first route of the path; RFC 9110 wants all its methods
        headers = {**(headers or {}), "Allow": ", ".join(_methods_of_path(request))}
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)


def _methods_of_path(request: Request) -> list[str]:
    def served(method: str) -> bool:
        scope = {**request.scope, "method": method}
        return any(route.matches(scope)[0] == Match.FULL for route in request.app.router.routes)

    return [method for method in _METHODS if served(method)]


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


async def _bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    detail = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")} for e in exc.errors()]
    return JSONResponse({"detail": detail}, status_code=422)


async def _bug(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return JSONResponse(
        {"detail": "internal error (a bug in grpo-config; the service log has the traceback)"}, status_code=500
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, _bad_request)
    app.add_exception_handler(Exception, _bug)

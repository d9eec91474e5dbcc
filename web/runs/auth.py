"""Bearer-token access to the runs endpoints: 401 without a valid token, then 403 when runs are off.

The token comes from GRPO_WEB_TOKEN, or is generated at start (and printed by `grpo serve`). It is compared in
constant time. Header tokens rather than cookies: a page on another origin cannot make the browser send them,
so there is no cross-site request forgery to defend against.
"""

from __future__ import annotations

import hmac
import logging
import secrets

from fastapi import FastAPI, Header, HTTPException, Request

from grpo_web.runs.settings import RunsSettings

log = logging.getLogger("grpo_web.runs")
CHALLENGE = 'Bearer realm="grpo-config runs"'


def configure_token(app: FastAPI, settings: RunsSettings) -> str | None:
    """The token this app accepts: the operator's, else (runs on) a fresh random one, logged once."""
    if settings.token is not None and settings.token.get_secret_value():
        token = settings.token.get_secret_value()
    elif settings.runs:
        token = secrets.token_urlsafe(32)
        log.warning("runs are on and GRPO_WEB_TOKEN is not set; this service's runs token is %s", token)
    else:
        token = None
    app.state.runs_token = token
    return token


def _unauthorized(detail: str, error: str | None = None) -> HTTPException:
    challenge = CHALLENGE + (f', error="{error}"' if error else "")
    return HTTPException(401, detail, headers={"WWW-Authenticate": challenge})


def holds_token(request: Request, authorization: str | None) -> bool:
    """Whether the request carries this service's runs token (for an endpoint open to every client that does more
    for a token holder: the planner reads what that client's runs would read)."""
    scheme, _, given = (authorization or "").partition(" ")
    expected = getattr(request.app.state, "runs_token", None)
    return (
        scheme.lower() == "bearer"
        and bool(given.strip())
        and expected is not None
        and hmac.compare_digest(given.strip().encode(), expected.encode())
    )


def require_token(request: Request, authorization: str | None = Header(None, include_in_schema=False)) -> None:
    """Dependency of every runs endpoint (declared on the router, so it runs before the body is read)."""
    scheme, _, given = (authorization or "").partition(" ")
    given = given.strip()
    if scheme.lower() != "bearer" or not given:
        raise _unauthorized("the runs endpoints need an 'Authorization: Bearer TOKEN' header")
    expected = getattr(request.app.state, "runs_token", None)
    if expected is not None and not hmac.compare_digest(given.encode(), expected.encode()):
        raise _unauthorized("the bearer token is not valid for this service", "invalid_token")
    if not request.app.state.settings.runs:
        raise HTTPException(
            403,
            "runs are disabled on this service; its operator enables them with "
            "GRPO_WEB_RUNS=1 or `grpo serve --enable-runs`",
        )

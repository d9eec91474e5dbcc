"""Wiring runs into the app: the token, the API router, the /runs page and the manager's life.

create_app calls `install_runs`; the app's lifespan enters `runs_supervision`, which opens the RunManager only
when the operator turned runs on. Without it the endpoints still exist and answer 401, then 403.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Iterator

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse

from grpo_web.api import run_health, run_views, runs, smoke
from grpo_web.pages import PAGE_HEADERS, STATIC_DIR
from grpo_web.runs.auth import configure_token
from grpo_web.runs.demo_assets import DemoAssets
from grpo_web.runs.manager import RunManager
from grpo_web.settings import Settings

log = logging.getLogger("grpo_web.runs")
page_router = APIRouter(include_in_schema=False)
PAGE_HEADER_DICT = {name.decode(): value.decode() for name, value in PAGE_HEADERS}


@page_router.get("/runs")
def runs_page() -> FileResponse:
    """The runs page: state, live charts and the log tail. It asks for the token and keeps it in the tab."""
    return FileResponse(
        STATIC_DIR / "runs.html", media_type="text/html", headers={"Cache-Control": "no-cache", **PAGE_HEADER_DICT}
    )


def install_runs(app: FastAPI, settings: Settings) -> None:
    configure_token(app, settings)
    app.state.runs_manager, app.state.runs_error, app.state.demo_assets = None, None, None
    app.include_router(run_views.router)  # first: /compare before /{run_id}
    app.include_router(run_health.router)
    app.include_router(runs.router)
    app.include_router(smoke.router)  # POST /api/v1/smoke (docs/smoke.md)
    app.include_router(page_router)


@contextmanager
def runs_supervision(app: FastAPI) -> Iterator[None]:
    settings = app.state.settings
    if not settings.runs:
        yield
        return
    try:
        app.state.runs_manager = RunManager(settings).open()
        if settings.runs_prepare_demo:  # the form's Demo recipe trains on its first launch (demo_assets.py)
            app.state.demo_assets = DemoAssets(app.state.runs_manager.base_dir).start()
    except (OSError, RuntimeError) as error:  # the service still validates; the runs endpoints answer 503
        app.state.runs_error = f"runs are unavailable: {error}"
        log.error(app.state.runs_error)
    try:
        yield
    finally:
        if app.state.runs_manager is not None:
            app.state.runs_manager.close()
            app.state.runs_manager = None

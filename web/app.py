"""create_app(settings) -> FastAPI: the routers, error handlers and pages, nothing else (interface.md §5)."""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager
from typing import AsyncIterator

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

import grpo_schema
from grpo_web.api import catalog, check, doctor, emit, health, local, plan, verl, yaml_io
from grpo_web.api.errors import install_error_handlers
from grpo_web.api.fastlane import FastValidate
from grpo_web.api.memo import AnswerCache
from grpo_web.pages import mount_pages
from grpo_web.runs.service import install_runs, runs_supervision
from grpo_web.settings import Settings, get_settings

DESCRIPTION = """Validate and explain GRPO configs for TRL 1.16's `trl grpo --config run.yaml`.

Config endpoints take YAML text (`application/yaml`, `text/yaml`, `application/x-yaml`, `text/plain`) or a JSON
object (`application/json`) and answer with the same file object as `grpo validate --format json`.
"""


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    # The first page load needs the schema; build it while the server is already answering.
    threading.Thread(target=catalog.warm_cache, name="warm-schema", daemon=True).start()
    with runs_supervision(app):  # starts queued runs and re-attaches to running ones when runs are on
        yield


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    app = FastAPI(title="grpo-config", version=grpo_schema.__version__, description=DESCRIPTION, lifespan=_lifespan)
    app.state.settings = settings
    app.state.answers = AnswerCache(int(settings.validate_cache_mib * 2**20))
    for module in (health, catalog, check, plan, doctor, yaml_io, verl, emit, local):
        app.include_router(module.router)
    install_runs(app, settings)
    app.add_middleware(FastValidate)  # added first, so innermost: CORS and the page headers wrap it too
    mount_pages(app)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Content-Type", "Authorization"],
        )
    install_error_handlers(app)
    return app

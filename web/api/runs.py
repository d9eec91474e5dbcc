"""The runs API (interface.md §5): launch a validated config, list, watch, read logs, cancel, resume.

Every endpoint needs `Authorization: Bearer TOKEN` (401), and answers 403 while the operator has runs off.
A config is checked exactly as POST /api/v1/validate checks it, then against the service policy
(grpo_schema.engine.policy), then against what grpo_runtime can run (grpo_runtime.support, the GRPO-U codes `grpo launch
--dry-run` reports, evaluated without loading anything); any error is a 422 whose body is the validate file object
with every diagnostic. The runtime's warnings are kept with the run.
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse

from grpo_schema.engine.policy import output_dir_busy, service_policy
from grpo_web.api.body import ConfigBody, config_body
from grpo_web.api.docs import config_body_doc
from grpo_web.api.params import PATH_MAX_CHARS
from grpo_web.api.responses import ConfigJSONResponse
from grpo_web.api.run_checks import (
    check_for_run,
    output_owned,
    output_owner,
    refused,
    run_paths,
    stored_text,
    warnings_text,
)
from grpo_web.api.run_params import Manager, RunId, WorldSize, run_of, within_max_world_size
from grpo_web.runs import documents, outputs
from grpo_web.runs.auth import require_token
from grpo_web.runs.manager import OutputBusy, OutputOwned, QueueFull, RunConflict, RunManager

router = APIRouter(
    prefix="/api/v1/runs",
    tags=["runs"],
    dependencies=[Depends(require_token)],
    responses={
        401: {"description": "no valid bearer token"},
        403: {"description": "runs are disabled on this service"},
    },
)
LOG_CHUNK = 64 << 10


@router.post(
    "",
    status_code=201,
    summary="Launch a run",
    openapi_extra=config_body_doc(),
    responses={
        201: {"description": 'queued: {"id": ...}'},
        422: {"description": "the validate file object with every diagnostic"},
        429: {"description": "the queue is full"},
    },
)
async def create_run(
    request: Request,
    manager: Manager,
    body: Annotated[ConfigBody, Depends(config_body)],
    world_size: WorldSize = None,
    profile: Annotated[list[str], Query(description="refused for runs (GRPO-X005)")] = [],
    path: Annotated[str, Query(max_length=PATH_MAX_CHARS)] = "<request>",
    existing_output: Annotated[
        Literal["resume", "overwrite"] | None,
        Query(
            description="when output_dir belongs to another (finished) run: `resume` continues that run from its last "
            "complete checkpoint, `overwrite` deletes its outputs first; otherwise the launch is refused "
            "(422, GRPO-X007)"
        ),
    ] = None,
) -> Any:
    """Validate, apply the service policy, then queue the run; it starts when a slot is free. A run owns its
    output_dir: two runs never write the same one unless one resumes the other."""
    settings = request.app.state.settings
    within_max_world_size(world_size, settings)
    result, reads, missing = await check_for_run(request, body, world_size, path, manager.base_dir)
    policy = settings.service_policy()
    refusals = service_policy(result, policy, profile) + missing
    from grpo_runtime.support import assess  # torch-free, and loaded only once a run is asked for

    runtime = assess(result, "service")
    refusals += [d for d in runtime if d.severity == "error"]
    if result.valid and not refusals and result.plan is not None:  # e.g. whether a Ray cluster can place it
        refusals += await run_in_threadpool(manager.backend.refusals, result)
    if not result.valid or refusals or result.plan is None:
        return refused(result, refusals, reads)
    result.diagnostics += runtime  # its warnings, stored with the run
    output_dir, resuming, resume_path = run_paths(result.config, policy)
    text, config_format = stored_text(body)
    try:
        run = await run_in_threadpool(
            manager.submit,
            text,
            config_format,
            result.world_size,
            output_dir,
            resume_path,
            warnings_text(result),
            resuming,
            None,
            existing_output,
            reads,
        )
    except OutputBusy as busy:
        return refused(result, [output_dir_busy(result, busy.run_id, busy.output_dir)], reads)
    except OutputOwned as owned:
        return refused(result, [output_owned(result, owned)], reads, output_owner=output_owner(manager, owned, text))
    except RunConflict as conflict:
        raise HTTPException(409, str(conflict))
    except QueueFull as full:
        raise HTTPException(429, str(full))
    return ConfigJSONResponse(documents.created(run), status_code=201, headers={"Location": f"/api/v1/runs/{run.id}"})


@router.get("", summary="List runs")
def list_runs(
    manager: Manager, state: Annotated[list[str], Query()] = [], limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> dict:
    """Newest first; `?state=running` (repeatable) filters."""
    runs = manager.store.list(tuple(state) or None, limit)
    return {"runs": [documents.summary(run, manager.store) for run in runs]}


@router.get("/{run_id}", summary="A run: state, config, checkpoints and metrics so far")
def get_run(
    manager: Manager,
    run_id: RunId,
    metrics_after: Annotated[int | None, Query(description="only metrics of later steps")] = None,
    metrics_until: Annotated[int | None, Query(description="only metrics up to this step")] = None,
    metrics: Annotated[
        bool, Query(description="false: no metrics (the run's summary at once, however long it ran)")
    ] = True,
) -> Any:
    return ConfigJSONResponse(
        documents.detail(run_of(manager, run_id), manager.store, metrics_after, metrics_until, metrics)
    )


@router.post(
    "/{run_id}/cancel",
    status_code=202,
    summary="Cancel a run",
    responses={409: {"description": "the run has already finished"}},
)
def cancel_run(manager: Manager, run_id: RunId) -> dict:
    """A queued run is cancelled at once; a running one gets SIGTERM (its whole process group), then SIGKILL
    after the grace period. Checkpoints already written stay."""
    run_of(manager, run_id)
    try:
        run = manager.cancel(run_id)
    except RunConflict as conflict:
        raise HTTPException(409, str(conflict))
    return documents.summary(run, manager.store)


@router.post(
    "/{run_id}/resume",
    status_code=201,
    summary="Resume a run from its last checkpoint",
    responses={409: {"description": "still running, no complete checkpoint, or no step left to train"}},
)
def resume_run(
    manager: Manager,
    run_id: RunId,
    max_steps: Annotated[
        int | None,
        Query(
            ge=1,
            le=1 << 40,
            description=(
                "train to this step: max_steps raised in the resumed run's config (a run that trained all its "
                "steps goes on)"
            ),
        ),
    ] = None,
) -> Any:
    """A new run with the same config and output_dir, resume_from_checkpoint set to the last complete one."""
    run_of(manager, run_id)
    try:
        run = manager.resume(run_id, max_steps)
    except RunConflict as conflict:
        raise HTTPException(409, str(conflict))
    except OutputBusy as busy:
        raise HTTPException(409, f"run {busy.run_id} is writing {busy.output_dir}")
    except QueueFull as full:
        raise HTTPException(429, str(full))
    return ConfigJSONResponse(documents.created(run), status_code=201, headers={"Location": f"/api/v1/runs/{run.id}"})


@router.get(
    "/{run_id}/logs",
    summary="The run's log (stdout and stderr of every process)",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}}},
)
async def run_logs(
    request: Request,
    manager: Manager,
    run_id: RunId,
    offset: Annotated[int, Query(ge=0, description="byte offset to start from")] = 0,
    limit: Annotated[int, Query(ge=1, le=1 << 20)] = LOG_CHUNK,
    follow: Annotated[bool, Query(description="stream until the run ends")] = False,
) -> Response:
    """Bytes from `offset`; `X-Log-Offset` is where to continue. With `follow=true` the answer streams
    (chunked) as the log grows, and ends when the run has finished and its log is read to the end."""
    run = run_of(manager, run_id)
    headers = {"X-Run-State": run.state, "Cache-Control": "no-store"}
    if not follow:
        data = outputs.read_log(run, offset, limit)
        return Response(
            data,
            media_type="text/plain; charset=utf-8",
            headers={**headers, "X-Log-Offset": str(offset + len(data)), "X-Log-Size": str(outputs.log_size(run))},
        )
    stream = _follow(request, manager, run_id, offset, request.app.state.settings.runs_follow_max_s)
    return StreamingResponse(
        stream, media_type="text/plain; charset=utf-8", headers={**headers, "X-Log-Offset": str(offset)}
    )


async def _follow(request: Request, manager: RunManager, run_id: str, offset: int, max_seconds: float):
    deadline = time.monotonic() + max_seconds
    while time.monotonic() < deadline and not await request.is_disconnected():
        run = manager.store.get(run_id)
        data = outputs.read_log(run, offset, LOG_CHUNK)
        if data:
            offset += len(data)
            yield data
            continue
        if run.finished:
            return
        await asyncio.sleep(0.25)

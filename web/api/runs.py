"""The runs API (interface.md §5): launch a validated config, list, watch, read logs, cancel, resume.

Every endpoint needs `Authorization: Bearer TOKEN` (401), and answers 403 while the operator has runs off.
A config is checked exactly as POST /api/v1/validate checks it, then against the service policy
(grpo_schema.engine.policy), then against what grpo_runtime can run (grpo_runtime.support, the GRPO-U codes `grpo launch
--dry-run` reports, evaluated without loading anything); any error is a 422 whose body is the validate file object
with every diagnostic. The runtime's warnings are kept with the run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from pathlib import Path as Path_
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse

from grpo_schema import CheckResult, check_mapping, check_text
from grpo_schema.engine.check import Override, bounded
from grpo_schema.engine.policy import output_dir_busy, service_policy
from grpo_schema.engine.policy_paths import missing_local_paths, resolve_under
from grpo_schema.engine.resume import resume_target
from grpo_web.api.body import ConfigBody, config_body
from grpo_web.api.docs import config_body_doc
from grpo_web.api.params import PATH_MAX_CHARS
from grpo_web.api.responses import ConfigJSONResponse
from grpo_web.runs import demo_assets, documents, outputs, paths, resumable
from grpo_web.runs.auth import require_token
from grpo_web.runs.manager import OutputBusy, OutputOwned, QueueFull, RunConflict, RunManager
from grpo_web.runs.store import Run

router = APIRouter(
    prefix="/api/v1/runs",
    tags=["runs"],
    dependencies=[Depends(require_token)],
    responses={
        401: {"description": "no valid bearer token"},
        403: {"description": "runs are disabled on this service"},
    },
)
RunId = Annotated[str, Path(pattern=r"^[0-9a-f]{12}$", description="the run's id")]
LOG_CHUNK = 64 << 10


def manager_of(request: Request) -> RunManager:
    manager = getattr(request.app.state, "runs_manager", None)
    if manager is None:
        reason = getattr(request.app.state, "runs_error", None) or "the runs manager is not running"
        raise HTTPException(503, reason)
    return manager


Manager = Annotated[RunManager, Depends(manager_of)]
WorldSize = Annotated[
    int | None, Query(ge=1, description="training processes (default: num_processes from the config, else 1)")
]


def within_max_world_size(world_size: int | None, settings) -> None:
    if world_size is not None and world_size > settings.max_world_size:
        raise HTTPException(422, f"world_size must be at most {settings.max_world_size}")


def run_of(manager: RunManager, run_id: str) -> Run:
    run = manager.store.get(run_id)
    if run is None:
        raise HTTPException(404, f"no run {run_id}")
    return run


def _check(
    body: ConfigBody,
    world_size: int | None,
    path: str,
    allow_env: list[str],
    overrides: dict[str, str] | None = None,
    trl_version: tuple[str, str] | None = None,
) -> CheckResult:
    """Validate as `grpo launch` will, with the operator's env allow-list as its --allow-env names and the paths
    the service resolved as its --set values."""
    options: dict[str, Any] = {"path": path, "world_size": world_size, "allow_env": allow_env}
    if overrides:
        options["overrides"] = [
            Override(name, value, f"--set {name}=... (resolved from the service's folder)")
            for name, value in overrides.items()
        ]
    if trl_version is not None:
        options["trl_version"], options["trl_version_source"] = trl_version
    if body.yaml is not None:
        return check_text(body.yaml, **options)
    return check_mapping(body.mapping, **options)


def check_resolved(
    body: ConfigBody,
    world_size: int | None,
    path: str,
    allow_env: list[str],
    base: Path_,
    trl_version: tuple[str, str] | None = None,
) -> tuple[CheckResult, dict[str, str]]:
    """Validate the config as it will run: its relative paths resolved against the service's folder
    (grpo_web.runs.paths), then checked again with them when there were any. Returns the result and the paths."""
    result = _check(body, world_size, path, allow_env, trl_version=trl_version)
    reads = paths.resolve_reads(result.config, base, result.launch) if result.config is not None else {}
    if reads:
        result = _check(body, world_size, path, allow_env, reads, trl_version)
    return result, reads


async def check_for_run(
    request: Request,
    body: ConfigBody,
    world_size: int | None,
    path: str,
    base: Path_,
    trl_version: tuple[str, str] | None = None,
) -> tuple[CheckResult, dict[str, str], list]:
    """check_resolved for a run or a smoke test, plus GRPO-X010 for local model and dataset paths that name
    nothing. A config that reads the demo's paths waits while the service still writes them (demo_assets.py)."""
    allow_env = request.app.state.settings.runs_env_allowlist
    result, reads = await run_in_threadpool(check_resolved, body, world_size, path, allow_env, base, trl_version)
    demo = getattr(request.app.state, "demo_assets", None)
    if (
        demo is not None
        and result.config is not None
        and demo_assets.names_demo(result.config)
        and demo_assets.missing(base)
    ):
        await run_in_threadpool(demo.wait)
        result, reads = await run_in_threadpool(check_resolved, body, world_size, path, allow_env, base, trl_version)
    missing = missing_local_paths(result, base, reads)
    if demo is not None and demo.error:  # why the service could not write them itself
        missing = [
            dataclasses.replace(d, hint=f"{d.hint}; the service tried: {demo.error}")
            if "grpo demo demo" in (d.hint or "")
            else d
            for d in missing
        ]
    return result, reads, [bounded(d) for d in missing]


def _stored_text(body: ConfigBody) -> tuple[str, str]:
    if body.yaml is not None:
        return body.yaml.decode("utf-8"), "yaml"  # check_text accepted it, so it is UTF-8
    return json.dumps(body.mapping, indent=1, ensure_ascii=False) + "\n", "json"


def _refused(
    result: CheckResult, extra: list, resolved: dict[str, str] | None = None, **more: Any
) -> ConfigJSONResponse:
    document = result.to_dict()
    document["diagnostics"] += [d.to_dict() for d in extra]
    document["valid"] = False
    document["resolved_paths"] = resolved or {}
    document.update(more)
    return ConfigJSONResponse(document, status_code=422)


def _owner(manager: RunManager, owned: OutputOwned, config_text: str) -> dict[str, Any]:
    """The run that owns the output_dir, and whether this config could resume it (the form's choices read it)."""
    owner = owned.owner
    verdict = resumable.verdict(manager.store, owner, config_text)
    return {
        "id": owner.id,
        "state": owner.state,
        "resume": verdict.to_dict(),
        "differences": config_differences(config_text, owner.config_text),
    }


# Keys a resume sets or that name the folder itself: not a difference between two runs' settings.
_SAME_RUN_KEYS = frozenset({"output_dir", "resume_from_checkpoint"})


def config_differences(this: str, that: str) -> list[dict[str, Any]]:
    """The top-level keys where the config `this` differs from the config `that` (a resume trains on with this
    one's settings from that run's checkpoint): [{key, this, that}], a key one of them leaves out as null."""
    from grpo_schema.engine.loader import load_yaml

    mine, theirs = (load_yaml(text).data for text in (this, that))
    mine, theirs = (value if isinstance(value, dict) else {} for value in (mine, theirs))
    return [
        {"key": key, "this": mine.get(key), "that": theirs.get(key)}
        for key in sorted(set(mine) | set(theirs))
        if key not in _SAME_RUN_KEYS and mine.get(key) != theirs.get(key)
    ]


def _output_owned(result: CheckResult, owned: OutputOwned):
    """X007 for an output_dir a finished run owns: a second run would overwrite its checkpoints and model."""
    owner = owned.owner
    diag = output_dir_busy(result, owner.id, Path_(owned.output_dir))
    return bounded(
        dataclasses.replace(
            diag,
            message=f"output_dir {owned.output_dir!r} belongs to run {owner.id} ({owner.state}); a new run there "
            "would overwrite its checkpoints and model",
            hint=f"leave output_dir unset (each run gets a folder of its own) or choose another; or launch with "
            f"?existing_output=resume to continue run {owner.id} from its last checkpoint, or "
            f"?existing_output=overwrite to delete its outputs and start again",
        )
    )


def _warnings(result: CheckResult) -> str:
    return json.dumps([d.to_dict() for d in result.diagnostics], default=str)


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
        return _refused(result, refusals, reads)
    result.diagnostics += runtime  # its warnings, stored with the run
    config = result.config
    output_dir = (
        resolve_under(policy.runs_dir, str(config.output_dir), policy.allow_outside_runs_dir)
        if config.output_dir is not None
        else None
    )
    resume = resume_target(config.resume_from_checkpoint)
    resuming = resume is not None
    resume_path = (
        resolve_under(policy.runs_dir, resume, policy.allow_outside_runs_dir) if isinstance(resume, str) else None
    )
    text, config_format = _stored_text(body)
    try:
        run = await run_in_threadpool(
            manager.submit,
            text,
            config_format,
            result.world_size,
            output_dir,
            resume_path,
            _warnings(result),
            resuming,
            None,
            existing_output,
            reads,
        )
    except OutputBusy as busy:
        return _refused(result, [output_dir_busy(result, busy.run_id, busy.output_dir)], reads)
    except OutputOwned as owned:
        return _refused(result, [_output_owned(result, owned)], reads, output_owner=_owner(manager, owned, text))
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

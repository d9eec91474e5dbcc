"""A run's health: the run-health findings (grpo_schema.health, the engine `grpo health` uses) of its output
directory, for the runs page and API clients. Same token and limits as every runs endpoint."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool

from grpo_schema.health import check_run_dir
from grpo_web.api.run_params import Manager, RunId, run_of
from grpo_web.runs import outputs
from grpo_web.runs.auth import require_token

router = APIRouter(
    prefix="/api/v1/runs",
    tags=["runs"],
    dependencies=[Depends(require_token)],
    responses={
        401: {"description": "no valid bearer token"},
        403: {"description": "runs are disabled on this service"},
    },
)


@router.get("/{run_id}/health", summary="The run's health: findings on what it has logged so far")
async def run_health(manager: Manager, run_id: RunId) -> Any:
    """The report of `grpo health OUTPUT_DIR --format json` for this run (one entry of its `runs`; for a run whose
    output_dir another run overwrote, of the records it kept): `findings`
    each with code, severity, message, hint, fix, the metric, the first and last step it saw and the values;
    `healthy`; `live` while the metrics file is being written. A run that has logged nothing yet has no findings
    and an `errors` entry saying so; nothing is written into the run's directory."""
    run = run_of(manager, run_id)
    report = await run_in_threadpool(check_run_dir, outputs.records_folder(run))
    return {**report.to_dict(), "state": run.state}

"""What every runs route takes: the run manager (503 while it is not running), a run's id and the run it names
(404), and a world size with the operator's maximum (422)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Path, Query, Request

from grpo_web.runs.manager import RunManager
from grpo_web.runs.store import Run

RunId = Annotated[str, Path(pattern=r"^[0-9a-f]{12}$", description="the run's id")]


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

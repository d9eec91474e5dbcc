"""A run as the API shows it: a summary for lists, the detail with config, checkpoints and metrics."""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path
from typing import Any

from grpo_web.runs import completions, outputs, resumable
from grpo_web.runs.store import Run, Store


def _when(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).isoformat(timespec="seconds")


def start_step(run: Run) -> int:
    """The step the run starts at: its resume checkpoint's, else 0."""
    resumed = Path(run.resume_checkpoint).name if run.resume_checkpoint else ""
    return outputs.checkpoint_step(Path(resumed)) if outputs.CHECKPOINT.match(resumed) else 0


def own_last_step(run: Run, latest: dict | None) -> int | None:
    """The last step that is the run's own to show: None (no bound) until a successor resumes it; then the last step
    it logged (or the step it started at): what its successor writes in the same output_dir is not this run's."""
    if not run.resumed_by:
        return None
    step = latest.get("step") if latest else None
    return step if isinstance(step, int) else start_step(run)


def own_completions(run: Run, latest: dict | None) -> completions.Bound:
    """Which rows of the completions file are the run's: all until a successor resumes it; then none past its last
    step, nor from where the successor began appending."""
    if not run.resumed_by:
        return completions.Bound()
    return completions.Bound(own_last_step(run, latest), run.completions_end)


def find_completions_ends(store: Store) -> None:
    """For a database from before the service recorded where each successor began appending (completions_end): work
    it out once from the completions file (where the steps went back to the successor's first step), oldest run
    first, so each search starts past the parent's own beginning. A parent and its successor that both ran a step
    then show their own rows of it, never each other's."""
    ends: dict[str, int] = {}
    for run in reversed(store.list(limit=1 << 30)):
        if run.completions_end is not None:
            ends[run.id] = run.completions_end
        if not run.resumed_by or run.completions_end is not None or run.replaced_by:
            continue
        successor = store.get(run.resumed_by)
        if successor is None:
            continue
        end = completions.restart_offset(
            run.output_dir, start_step(successor) + 1, after=ends.get(run.resumed_from or "", 0)
        )
        if end is not None:
            store.update(run.id, completions_end=end)
            ends[run.id] = end


def own_checkpoints(run: Run, latest: dict | None) -> list[Path]:
    """The complete checkpoints the run can show: none once its output_dir was overwritten, none past its own last
    step once a successor trains on there."""
    if run.replaced_by:
        return []
    bound = own_last_step(run, latest)
    return [
        c
        for c in outputs.checkpoints(run.output_dir)
        if outputs.complete(c) and (bound is None or outputs.checkpoint_step(c) <= bound)
    ]


def progress(run: Run, latest: dict | None, pace: float | None = None) -> dict[str, Any]:
    """How far the run is: total steps (max_steps), the fraction done, an ETA and the steps a cancel would lose
    since the last checkpoint. The ETA goes at the run's wall-clock `pace` (seconds a step, as the service saw the
    steps arrive: logging, evaluation and checkpoints included), else at the runtime's logged step_time (the
    training alone, until two reads of the metrics are apart), else at the pace since the start (model loading
    included)."""
    step = latest.get("step") if latest else None
    total = resumable.max_steps(run.config_text)
    done = [outputs.checkpoint_step(c) for c in own_checkpoints(run, latest)]
    start = start_step(run)
    eta = None
    if total and step and step > start and run.started_at and run.state == "running":
        logged = latest.get("step_time")
        if pace is None:
            pace = (
                logged
                if isinstance(logged, (int, float)) and logged > 0
                else (time.time() - run.started_at) / (step - start)
            )
        eta = round(max(total - step, 0) * pace, 1)
    last = max(done) if done else None
    fraction = round(min(step / total, 1.0), 4) if total and step else (0.0 if total else None)
    return {
        "total_steps": total,
        "fraction": fraction,
        "eta_seconds": eta,
        "last_checkpoint_step": last,
        "steps_since_checkpoint": (step - (last or start)) if step is not None else None,
    }


def job(run: Run) -> dict[str, Any] | None:
    """Where a run that is not a process of this machine trains: its job's id, state and reason in the backend's
    words (the job id is None until it is submitted)."""
    if run.backend == "local":
        return None
    return {"job_id": run.job_id, "state": run.job_state, "reason": run.job_reason}


def summary(run: Run, store: Store) -> dict[str, Any]:
    latest = store.latest_metrics(run.id)
    return {
        "id": run.id,
        "state": run.state,
        "reason": run.reason,
        "exit_code": run.exit_code,
        "created_at": _when(run.created_at),
        "started_at": _when(run.started_at),
        "finished_at": _when(run.finished_at),
        "world_size": run.world_size,
        "output_dir": run.output_dir,
        "resumed_from": run.resumed_from,
        "resumed_by": run.resumed_by,
        "resume_from_checkpoint": run.resume_checkpoint,
        "cancel_requested": run.cancel_requested_at is not None,
        "step": latest.get("step") if latest else None,
        "latest": latest,
        "backend": run.backend,
        "reward": store.latest_value(run.id, "reward"),  # the last training reward (the latest may be an eval's)
        "job": job(run),  # the backend's job, whichever backend; `slurm` and `ray` repeat it under their names
        "slurm": job(run) if run.backend == "slurm" else None,
        "ray": job(run) if run.backend == "ray" else None,
        "progress": progress(run, latest, store.pace(run.id) if run.state == "running" else None),
        "error": run.error,
        "replaced_by": run.replaced_by,
        "resolved_paths": json.loads(run.overrides or "{}"),
    }


def detail(
    run: Run,
    store: Store,
    metrics_after: int | None = None,
    metrics_until: int | None = None,
    with_metrics: bool = True,
) -> dict[str, Any]:
    """The summary, config, checkpoints and resume choice, and the metrics of the steps after `metrics_after` up
    to `metrics_until` (without `with_metrics`, none: a page shows the run at once, then loads them by range)."""
    latest = store.latest_metrics(run.id)
    return {
        **summary(run, store),
        "line": line(run, store),
        "config": run.config_text,
        "config_format": run.config_format,
        "diagnostics": json.loads(run.warnings),
        # the ones a resume can start from: a checkpoint still being written, or cut short by a cancel, is left out
        "checkpoints": [c.name for c in own_checkpoints(run, latest)],
        # whether POST .../resume would train anything, and why not (the runs page's Resume button says it)
        "resume": resumable.verdict(store, run).to_dict(),
        "log_size": outputs.log_size(run),
        "metrics": store.metrics(run.id, metrics_after, metrics_until) if with_metrics else [],
    }


def line(run: Run, store: Store) -> list[str]:
    """The ids of the run's line, oldest first: the runs it resumes (resumed_from back) and those that resumed it
    (resumed_by on), all writing one output_dir."""
    before, seen, at = [], {run.id}, run
    while at.resumed_from and at.resumed_from not in seen and (at := store.get(at.resumed_from)) is not None:
        before.append(at.id)
        seen.add(at.id)
    after, at = [], run
    while at.resumed_by and at.resumed_by not in seen and (at := store.get(at.resumed_by)) is not None:
        after.append(at.id)
        seen.add(at.id)
    return [*reversed(before), run.id, *after]


def created(run: Run) -> dict[str, Any]:
    return {
        "id": run.id,
        "state": run.state,
        "output_dir": run.output_dir,
        "resumed_from": run.resumed_from,
        "resumed_by": run.resumed_by,
        "resolved_paths": json.loads(run.overrides or "{}"),
        "url": f"/api/v1/runs/{run.id}",
        "logs": f"/api/v1/runs/{run.id}/logs",
        "page": f"/runs#run={run.id}",
    }

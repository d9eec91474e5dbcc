"""A run as the API shows it: a summary for lists, the detail with config, checkpoints and metrics."""

from __future__ import annotations

import datetime
import json
from typing import Any

from web.runs import outputs
from web.runs.store import Run, Store


def _when(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).isoformat(timespec="seconds")


def summary(run: Run, store: Store) -> dict[str, Any]:
    latest = store.latest_metrics(run.id)
    return {
        "id": run.id, "state": run.state, "reason": run.reason, "exit_code": run.exit_code,
        "created_at": _when(run.created_at), "started_at": _when(run.started_at),
        "finished_at": _when(run.finished_at), "world_size": run.world_size, "output_dir": run.output_dir,
        "resumed_from": run.resumed_from, "resume_from_checkpoint": run.resume_checkpoint,
        "cancel_requested": run.cancel_requested_at is not None,
        "step": latest.get("step") if latest else None, "latest": latest, "backend": run.backend,
        "slurm": {"job_id": run.slurm_job_id, "state": run.slurm_state, "reason": run.slurm_reason}
        if run.backend == "slurm" else None,
    }


def detail(run: Run, store: Store, metrics_after: int | None = None) -> dict[str, Any]:
    return {
        **summary(run, store),
        "config": run.config_text, "config_format": run.config_format,
        "diagnostics": json.loads(run.warnings),
        # the ones a resume can start from: a checkpoint still being written, or cut short by a cancel, is left out
        "checkpoints": [c.name for c in outputs.checkpoints(run.output_dir) if outputs.complete(c)],
        "log_size": outputs.log_size(run),
        "metrics": store.metrics(run.id, metrics_after),
    }


def created(run: Run) -> dict[str, Any]:
    return {"id": run.id, "state": run.state, "output_dir": run.output_dir,
            "url": f"/api/v1/runs/{run.id}", "logs": f"/api/v1/runs/{run.id}/logs", "page": f"/runs#run={run.id}"}


"""What the service's planner may read for one request (POST /api/v1/plan, and /validate or /explain when they plan
for hardware): nothing a client names while runs are off; with runs on, the model folder and dataset a run of this
client would read (grpo_web.runs.paths.plan_reads), decided once the config is checked."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from starlette.requests import HTTPConnection

from grpo_schema.engine.hardware.reads import LocalReads
from grpo_web.runs.auth import holds_token
from grpo_web.runs.paths import RUNS_OFF, plan_reads


def service_reads(request: HTTPConnection) -> Any:
    """RUNS_OFF, or a function of the checked config giving what a run of this client would read (a client that
    sends the runs token may have a path outside the service's folder read)."""
    manager = getattr(request.app.state, "runs_manager", None)
    if not request.app.state.settings.runs or manager is None:
        return RUNS_OFF
    token_holder = holds_token(request, request.headers.get("authorization"))
    return partial(_reads_for, base=manager.base_dir, token_holder=token_holder)


def may_read(reads: Any) -> bool:
    """Whether planning with `reads` may read files (then it belongs in the thread pool, never the event loop)."""
    return callable(reads)


def _reads_for(result: Any, base: Path, token_holder: bool) -> LocalReads:
    return plan_reads(result.config, base, token_holder)

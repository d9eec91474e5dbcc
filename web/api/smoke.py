"""POST /api/v1/smoke: `grpo smoke` for a config, from the service and the form (beside /api/v1/runs, whose
/{run_id} routes would also answer to /runs/smoke).

Installed with the runs router (grpo_web.runs.service.install_runs). Allowed exactly where a run is: behind the runs token, only while runs are on, after the same checks as POST
/api/v1/runs (validate, the service policy, what grpo_runtime can run). The smoke runs as the operator's own `grpo
smoke` subprocess, started as a run is (grpo_web.runs.launcher: a session of its own, the environment without the
service's GRPO_WEB_* settings and token), in a scratch folder under the runs directory, offline (nothing is
downloaded), with the runs' environment allow-list and resolved paths, one at a time, and is stopped with
everything below it after `timeout` seconds. The answer is the `grpo smoke
--format json` report (docs/smoke.md); 422 with the validate file object when the config is refused first.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool

from grpo_schema.engine.policy import service_policy
from grpo_web.api.body import ConfigBody, config_body
from grpo_web.api.docs import config_body_doc
from grpo_web.api.params import PATH_MAX_CHARS, TrlVersion, trl_version_of
from grpo_web.api.responses import ConfigJSONResponse
from grpo_web.api.run_checks import check_for_run, refused, stored_text
from grpo_web.api.run_params import Manager, WorldSize, within_max_world_size
from grpo_web.runs import launcher, procs
from grpo_web.runs.auth import require_token

router = APIRouter(
    prefix="/api/v1",
    tags=["runs"],
    dependencies=[Depends(require_token)],
    responses={
        401: {"description": "no valid bearer token"},
        403: {"description": "runs are disabled on this service"},
    },
)

SMOKE_TIMEOUT_S = 600
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
_one_at_a_time = threading.Lock()


def smoke_command(
    config: Path,
    steps: int,
    engine: str,
    timeout: float,
    allow_env: list[str],
    overrides: dict[str, str] | None = None,
    trl_version: str | None = None,
    world_size: int | None = None,
) -> list[str]:
    """`grpo smoke` as a run's `grpo launch` is built: the resolved paths as --set, the operator's allow-list, and
    the world size the service checked (as `grpo launch --num-processes` gets it) as num_processes."""
    sizing = ["--set", f"num_processes={world_size}"] if world_size is not None else []
    command = [
        sys.executable,
        "-m",
        "grpo_schema.cli",
        "smoke",
        str(config),
        "--format",
        "json",
        "--steps",
        str(steps),
        "--engine",
        engine,
        "--timeout",
        str(timeout),
        *launcher.path_arguments(overrides),
        *sizing,
        *launcher.allow_env_arguments(allow_env),
    ]
    return command + (["--trl-version", trl_version] if trl_version else [])


def _failed(error: str, exit_code: int = 4) -> dict:
    return {
        "version": 1,
        "file": "<request>",
        "passed": False,
        "exit_code": exit_code,
        "groups": [],
        "component": "process",
        "error": error,
    }


def smoke_subprocess(
    text: str,
    suffix: str,
    runs_dir: Path,
    steps: int,
    engine: str,
    allow_env: list[str],
    timeout: float,
    overrides: dict[str, str] | None = None,
    trl_version: str | None = None,
    world_size: int | None = None,
) -> dict:
    """Run `grpo smoke` on the config text in a scratch folder under the runs directory; the JSON report. It is
    started as a run is (grpo_web.runs.launcher.spawn: a session of its own, no GRPO_WEB_* variables, so never
    the token), offline, and stopped with everything below it when it outlives its time."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    with _one_at_a_time, tempfile.TemporaryDirectory(prefix="smoke-", dir=runs_dir) as scratch:
        path = Path(scratch) / f"config.{suffix}"
        path.write_text(text, encoding="utf-8")
        command = smoke_command(path, steps, engine, timeout, allow_env, overrides, trl_version, world_size)
        popen = launcher.spawn(command, Path(scratch), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=OFFLINE)
        started = procs.start_time(popen.pid)
        try:
            out, err = popen.communicate(timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            launcher.stop(popen, started)
            popen.communicate()
            return _failed(f"the smoke test took longer than {timeout:.0f}s")
        out, err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        try:
            report = json.loads(out)
        except ValueError:
            return _failed((err or out)[-2000:], popen.returncode or 4)
    if not isinstance(report, dict):
        return _failed(out[-2000:], popen.returncode or 4)
    report["file"] = "<request>"
    return report


@router.post(
    "/smoke",
    summary="Smoke-test a config: its first optimizer steps on CPU, a checkpoint resumed",
    openapi_extra=config_body_doc(),
    responses={
        200: {"description": "the `grpo smoke --format json` report"},
        422: {"description": "the validate file object with every diagnostic"},
    },
)
async def smoke_run(
    request: Request,
    manager: Manager,
    body: Annotated[ConfigBody, Depends(config_body)],
    world_size: WorldSize = None,
    steps: Annotated[int, Query(ge=1, le=4)] = 2,
    engine: Annotated[str, Query(pattern="^(grpo_runtime|trl)$")] = "grpo_runtime",
    path: Annotated[str, Query(max_length=PATH_MAX_CHARS)] = "<request>",
    trl_version: TrlVersion = None,
) -> Any:
    """Checked as POST /api/v1/runs checks a config (at the same ?world_size=, relative paths resolved against the
    service's folder, the service policy, what grpo_runtime can run), with ?trl_version= as the check endpoints
    take it (passed on to `grpo smoke --trl-version`)."""
    settings = request.app.state.settings
    within_max_world_size(world_size, settings)
    release = trl_version_of(trl_version, settings) if trl_version is not None else None
    result, reads, missing = await check_for_run(request, body, world_size, path, manager.base_dir, release)
    refusals = service_policy(result, settings.service_policy(), []) + missing
    from grpo_runtime.support import assess

    refusals += [d for d in assess(result, "service") if d.severity == "error"]
    if not result.valid or refusals or result.plan is None:
        return refused(result, refusals, reads)
    text, config_format = stored_text(body)
    runs_dir = Path(settings.service_policy().runs_dir or tempfile.gettempdir()) / ".smoke"
    if _one_at_a_time.locked():
        raise HTTPException(429, "a smoke test is already running; try again when it is done")
    report = await run_in_threadpool(
        smoke_subprocess,
        text,
        config_format,
        runs_dir,
        steps,
        engine,
        list(settings.runs_env_allowlist),
        SMOKE_TIMEOUT_S,
        reads,
        release[0] if release else None,
        world_size,
    )
    return ConfigJSONResponse(report, status_code=200)

"""POST /api/v1/smoke: `grpo smoke` for a config, from the service and the form (beside /api/v1/runs, whose
/{run_id} routes would also answer to /runs/smoke).

Installed with the runs router (grpo_web.runs.service.install_runs). Allowed exactly where a run is: behind the runs token, only while runs are on, after the same checks as POST
/api/v1/runs (validate, the service policy, what grpo_runtime can run). The smoke runs as the operator's own `grpo
smoke` subprocess, in a scratch folder under the runs directory, offline (nothing is downloaded), with the runs'
environment allow-list, one at a time, and is stopped after `timeout` seconds. The answer is the `grpo smoke
--format json` report (docs/smoke.md); 422 with the validate file object when the config is refused first.
"""

from __future__ import annotations

import json
import os
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
from grpo_web.api.params import PATH_MAX_CHARS
from grpo_web.api.responses import ConfigJSONResponse
from grpo_web.api.runs import Manager, _check, _refused, _stored_text
from grpo_web.runs.auth import require_token

router = APIRouter(prefix="/api/v1", tags=["runs"], dependencies=[Depends(require_token)],
                   responses={401: {"description": "no valid bearer token"},
                              403: {"description": "runs are disabled on this service"}})

SMOKE_TIMEOUT_S = 600
_one_at_a_time = threading.Lock()


def smoke_subprocess(text: str, suffix: str, runs_dir: Path, steps: int, engine: str, allow_env: list[str],
                     timeout: float) -> dict:
    """Run `grpo smoke` on the config text in a scratch folder under the runs directory; the JSON report."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    with _one_at_a_time, tempfile.TemporaryDirectory(prefix="smoke-", dir=runs_dir) as scratch:
        path = Path(scratch) / f"config.{suffix}"
        path.write_text(text, encoding="utf-8")
        command = [sys.executable, "-m", "grpo_schema.cli", "smoke", str(path), "--format", "json",
                   "--steps", str(steps), "--engine", engine, "--timeout", str(timeout)]
        for name in allow_env:
            command += ["--allow-env", name]
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        try:
            done = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True,
                                  timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            return {"version": 1, "file": "<request>", "passed": False, "exit_code": 4, "groups": [],
                    "component": "process", "error": f"the smoke test took longer than {timeout:.0f}s"}
        try:
            report = json.loads(done.stdout)
        except ValueError:
            return {"version": 1, "file": "<request>", "passed": False, "exit_code": done.returncode or 4,
                    "groups": [], "component": "process", "error": (done.stderr or done.stdout)[-2000:]}
    report["file"] = "<request>"
    return report


@router.post("/smoke", summary="Smoke-test a config: its first optimizer steps on CPU, a checkpoint resumed",
             openapi_extra=config_body_doc(),
             responses={200: {"description": "the `grpo smoke --format json` report"},
                        422: {"description": "the validate file object with every diagnostic"}})
async def smoke_run(
    request: Request, manager: Manager, body: Annotated[ConfigBody, Depends(config_body)],
    steps: Annotated[int, Query(ge=1, le=4)] = 2,
    engine: Annotated[str, Query(pattern="^(grpo_runtime|trl)$")] = "grpo_runtime",
    path: Annotated[str, Query(max_length=PATH_MAX_CHARS)] = "<request>",
) -> Any:
    settings = request.app.state.settings
    result = await run_in_threadpool(_check, body, None, path, settings.runs_env_allowlist)
    refusals = service_policy(result, settings.service_policy(), [])
    from grpo_runtime.support import assess

    refusals += [d for d in assess(result, "service") if d.severity == "error"]
    if not result.valid or refusals or result.plan is None:
        return _refused(result, refusals)
    text, config_format = _stored_text(body)
    runs_dir = Path(settings.service_policy().runs_dir or tempfile.gettempdir()) / ".smoke"
    if _one_at_a_time.locked():
        raise HTTPException(429, "a smoke test is already running; try again when it is done")
    report = await run_in_threadpool(smoke_subprocess, text, config_format, runs_dir, steps, engine,
                                     list(settings.runs_env_allowlist), SMOKE_TIMEOUT_S)
    return ConfigJSONResponse(report, status_code=200)

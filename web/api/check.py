"""POST /api/v1/validate and /api/v1/explain: a config in, grpo_schema's file object out (always 200)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool

from grpo_schema import CheckResult, check_mapping, check_text
from grpo_schema.commands.explain import explain_result
from grpo_schema.dialects.verl.check import check_verl_text, looks_like_verl
from grpo_schema.engine.infile import read_file_settings
from grpo_schema.engine.policy import service_policy
from grpo_web.api.body import ConfigBody, config_body
from grpo_web.api.docs import ERRORS, FileResultDoc, config_body_doc
from grpo_web.api.params import CheckParams, DatasetSize, check_params
from grpo_web.api.responses import ConfigJSONResponse
from grpo_web.api.service_reads import may_read, service_reads

router = APIRouter(prefix="/api/v1", tags=["config"])
Body = Annotated[ConfigBody, Depends(config_body)]
Params = Annotated[CheckParams, Depends(check_params)]


@dataclass(frozen=True)
class FileSettingsParams:
    """What a file's `# grpo:` comment says, for a config sent as a JSON object (the form sends the mapping it
    edits, which has no comments): the names `--allow-env` allows, and `--hardware` (the memory fit is checked,
    as `grpo validate` does for a file whose comment names hardware)."""

    allow_env: tuple[str, ...] = ()
    hardware: str | None = None


async def file_settings_params(
    allow_env: Annotated[
        list[str],
        Query(
            max_length=200,
            description="an environment variable name the config "
            "may set in `env:` (repeatable), as --allow-env or a file's "
            "`# grpo: --allow-env NAME`",
        ),
    ] = [],
    hardware: Annotated[
        str | None,
        Query(
            max_length=100,
            description="also check the memory fit on this "
            "hardware (e.g. 8xH100-80GB), as a file's `# grpo: --hardware SPEC` "
            "comment makes `grpo validate` do",
        ),
    ] = None,
) -> FileSettingsParams:
    if hardware:
        from grpo_schema.engine.hardware.accelerators import HardwareError, parse_hardware

        try:
            parse_hardware(hardware)
        except HardwareError as exc:
            raise HTTPException(422, str(exc))
    return FileSettingsParams(tuple(allow_env), hardware or None)


FileParams = Annotated[FileSettingsParams, Depends(file_settings_params)]


async def run_check(
    body: ConfigBody,
    params: CheckParams,
    inline: bool = False,
    extra: FileSettingsParams | None = None,
    reads: Any = None,
) -> CheckResult:
    """The same call the CLI makes: YAML bytes through check_text, a JSON object through check_mapping. In the
    thread pool, unless the caller knows the body is small enough to check on the event loop (`inline`) and the
    memory fit it may ask for reads no file. `reads`: what that fit may read (service_reads)."""
    check, config = (check_text, body.yaml) if body.yaml is not None else (check_mapping, body.mapping)
    if body.yaml is not None and looks_like_verl(body.yaml.decode("utf-8", "replace")):
        return await run_in_threadpool(check_verl_text, body.yaml, "<request>")  # a verl script or YAML
    options = params.options()
    if body.yaml is not None and b"--hardware" in body.yaml and read_file_settings(body.yaml).hardware:
        check = partial(with_fit, reads=reads)  # the file's `# grpo: --hardware SPEC` asks for the fit
    if extra is not None and extra.allow_env:
        options["allow_env"] = extra.allow_env
    if extra is not None and extra.hardware:
        check = partial(with_fit, hardware=extra.hardware, reads=reads)
    plans = check not in (check_text, check_mapping)
    if inline and not (plans and may_read(reads)):
        return check(config, **options)
    return await run_in_threadpool(check, config, **options)


def with_fit(
    data: bytes | dict, path: str = "<request>", hardware: str | None = None, reads: Any = None, **options
) -> CheckResult:
    """The check plus the memory fit for the hardware the file's `# grpo:` comment names, or `hardware` (one
    engine: plan_fit), reading what `reads` allows (the plan's own: POST /api/v1/plan gives the same lines)."""
    from grpo_schema.commands.plan import check_for_hardware
    from grpo_schema.engine.check import _finish

    spec = hardware or read_file_settings(data).hardware
    from grpo_schema.commands.plan import memory_lines

    options.setdefault("local_files", False)  # the service reads no launch file; model and data as `reads` allows
    result, report = check_for_hardware(data, path, spec, reads=reads, **options)
    result.diagnostics = result.diagnostics + report.diagnostics
    result.memory_lines = memory_lines(report)
    return _finish(result)


@router.post(
    "/validate",
    summary="Validate a config",
    response_class=ConfigJSONResponse,
    responses={200: {"model": FileResultDoc, "description": "the file object, also for an invalid config"}, **ERRORS},
    openapi_extra=config_body_doc(),
)
async def validate(request: Request, body: Body, params: Params, extra: FileParams) -> ConfigJSONResponse:
    """Every diagnostic at once and the derived batch schedule: `grpo validate --format json`'s file object."""
    result = await run_check(body, params, extra=extra, reads=service_reads(request))
    return ConfigJSONResponse(result.to_dict())


@router.post(
    "/explain",
    summary="Explain the batch schedule",
    response_class=ConfigJSONResponse,
    responses={200: {"description": "the derived object and the schedule"}, **ERRORS},
    openapi_extra=config_body_doc(),
)
async def explain(
    request: Request,
    body: Body,
    params: Params,
    dataset_size: DatasetSize = None,
    launch: Annotated[
        bool,
        Query(
            description="also list what the service's run policy would refuse "
            "(`launch_diagnostics`; only when runs are on)"
        ),
    ] = False,
    extra: FileParams = FileSettingsParams(),
) -> ConfigJSONResponse:
    """`grpo explain --format json`: the file object's fields, the derived schedule with its sources and formulas,
    the micro-step walk (which micro-steps generate, reuse the buffer, end in an optimizer step) and notes."""
    result = await run_check(body, params, extra=extra, reads=service_reads(request))
    document = await run_in_threadpool(explain_result, result, dataset_size)
    settings = request.app.state.settings
    if launch and getattr(settings, "runs", False):
        # What POST /api/v1/runs would add to the diagnostics: shown live by the form, beside the fields.
        names = [p.name for p in params.profiles]
        document["launch_diagnostics"] = [d.to_dict() for d in service_policy(result, settings.service_policy(), names)]
    return ConfigJSONResponse(document)

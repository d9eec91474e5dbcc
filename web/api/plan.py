"""POST /api/v1/plan?hardware=SPEC: `grpo plan --format json`'s file object (fits, per-GPU parts, time).

What it reads of the files a config names: with runs off, nothing (the model's facts from the built-in catalogue,
prompts at 512 tokens unless prompt_length says). With runs on, the model folder and the dataset a run would read,
from where a run reads them (grpo_web.runs.paths.plan_reads): the plan then has the data's prompt lengths and
GRPO-H011, the lines `grpo validate --hardware` prints for the same file in the service's folder.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool

from grpo_schema.commands.plan import check_for_hardware, plan_document
from grpo_schema.engine.hardware.accelerators import HardwareError, parse_hardware
from grpo_web.api.body import ConfigBody, config_body
from grpo_web.api.docs import ERRORS, config_body_doc
from grpo_web.api.params import CheckParams, check_params
from grpo_web.api.responses import ConfigJSONResponse
from grpo_web.api.service_reads import service_reads

router = APIRouter(prefix="/api/v1", tags=["config"])
Body = Annotated[ConfigBody, Depends(config_body)]
Params = Annotated[CheckParams, Depends(check_params)]
Hardware = Annotated[
    str | None,
    Query(max_length=100, description="e.g. 8xH100-80GB, 2x8xA100-40GB, 80GB; default: the config's hardware: section"),
]
PromptLength = Annotated[
    int | None,
    Query(
        ge=1,
        le=1 << 24,
        description="prompt length in tokens to plan for "
        "(default: the 95th percentile of the dataset's prompts when runs are on "
        "and the service may read it, else 512)",
    ),
]
Mfu = Annotated[float | None, Query(gt=0, le=1, description="model-FLOPs utilisation for the time estimate")]
Engine = Annotated[
    Literal["trl", "grpo_runtime"],
    Query(
        description="whose code the estimate models: grpo_runtime "
        "(what the form and `grpo launch` run) or trl (`trl grpo`)"
    ),
]


@router.post(
    "/plan",
    summary="Will it fit: per-GPU memory and run time",
    response_class=ConfigJSONResponse,
    responses={200: {"description": "fits, the per-GPU parts, the time and the diagnostics"}, **ERRORS},
    openapi_extra=config_body_doc(),
)
async def plan(
    request: Request,
    body: Body,
    params: Params,
    hardware: Hardware = None,
    prompt_length: PromptLength = None,
    mfu: Mfu = None,
    engine: Engine = "grpo_runtime",
) -> ConfigJSONResponse:
    """The same engine as `grpo plan FILE --hardware SPEC --format json`. With runs off the model's facts come
    from the built-in catalogue and no dataset is read; with runs on, the model folder and dataset a run would
    read (a path outside the service's folder only for a client that sends the runs token)."""
    if hardware:
        try:
            parse_hardware(hardware)
        except HardwareError as exc:
            raise HTTPException(422, str(exc))
    data = body.yaml if body.yaml is not None else body.mapping
    options = params.options()
    result, report = await run_in_threadpool(
        check_for_hardware,
        data,
        options.pop("path"),
        hardware,
        world_size=options.pop("world_size"),
        prompt_length=prompt_length,
        mfu=mfu,
        local_files=False,
        batch_fixes=False,
        engine=engine,
        reads=service_reads(request),
        **options,
    )
    return ConfigJSONResponse(plan_document(result, report))

"""The environment the service's runs use (its own interpreter: runs start `sys.executable -m grpo_schema launch`),
judged as `grpo doctor` judges one: GET /api/v1/doctor for the environment against its TRL release, POST
/api/v1/doctor with a config for the features that config uses too. Packages are read from metadata, never
imported; the answer is `grpo doctor --format json`'s document."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool

from grpo_schema import check_mapping, check_text
from grpo_web.api.body import ConfigBody, config_body
from grpo_web.api.docs import ERRORS, config_body_doc
from grpo_web.api.params import CheckParams, check_params
from grpo_web.api.responses import ConfigJSONResponse

router = APIRouter(prefix="/api/v1", tags=["environment"])
Body = Annotated[ConfigBody, Depends(config_body)]
Params = Annotated[CheckParams, Depends(check_params)]


def _document(result: Any = None) -> dict[str, Any]:
    from grpo_schema.commands.doctor import judge
    from grpo_schema.doctor import current

    env = current()
    report = judge(env, result, None, local_files=False)
    if result is None:
        return {"version": 1, **report.to_dict()}
    loader_errors = [d.to_dict() for d in result.diagnostics if d.code.startswith("GRPO-Y") and d.severity == "error"]
    doc = {"version": 1, **report.to_dict()}
    doc["diagnostics"] = loader_errors + doc["diagnostics"]
    doc["ok"] = doc["ok"] and not loader_errors
    return doc


@router.get("/doctor", summary="The environment the service's runs use, against its TRL release",
            response_class=ConfigJSONResponse,
            responses={200: {"description": "grpo doctor's document: environment, ok, diagnostics"}})
async def doctor_environment() -> ConfigJSONResponse:
    return ConfigJSONResponse(await run_in_threadpool(_document))


@router.post("/doctor", summary="Can the service's environment run this config", response_class=ConfigJSONResponse,
             responses={200: {"description": "grpo doctor's document for the config's features"}, **ERRORS},
             openapi_extra=config_body_doc())
async def doctor_config(body: Body, params: Params) -> ConfigJSONResponse:
    """The config is read as POST /api/v1/validate reads it. The service never reads a path a client names: a
    `deepspeed:` file is not opened (its ZeRO stage is unknown) and reward modules are not looked up."""
    options = params.options()
    path = options.pop("path")
    if body.yaml is not None:
        result = await run_in_threadpool(lambda: check_text(body.yaml, path=path, suggest_fixes=False, **options))
    else:
        result = await run_in_threadpool(lambda: check_mapping(body.mapping, path=path, suggest_fixes=False,
                                                               **options))
    return ConfigJSONResponse(await run_in_threadpool(_document, result))

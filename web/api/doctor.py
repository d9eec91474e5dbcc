"""The environment the service's runs use (its own interpreter: runs start `sys.executable -m grpo_schema launch`,
which trains with grpo_runtime, not trl), judged as `grpo doctor` judges one, less what concerns trl itself:
GET /api/v1/doctor for the environment against its TRL release, POST /api/v1/doctor with a config for the
features that config uses too. Packages are read from metadata, never imported; the answer is `grpo doctor
--format json`'s document with `runs_with: "grpo_runtime"`."""

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


# What `grpo doctor` says about trl itself: the service's runs train with grpo_runtime (`grpo launch`), which does not
# import trl, so trl missing, another trl release or trl's own requirements do not stop them.
TRL_ONLY = frozenset({"GRPO-C001", "GRPO-C014", "GRPO-C002"})  # no trl, another trl release, trl's requirements
RUNS_WITH = "grpo_runtime"


def service_runs_document(env: Any, result: Any = None) -> dict[str, Any]:
    """grpo doctor's document for `env` as the service's runs use it: with `runs_with`, and without the
    diagnostics about trl itself (TRL_ONLY); the config's loader errors first when there is a config."""
    from grpo_schema.commands.doctor import judge

    report = judge(env, result, None, local_files=False)
    doc = {"version": 1, **report.to_dict(), "runs_with": RUNS_WITH}
    doc["diagnostics"] = [d for d in doc["diagnostics"] if d["code"] not in TRL_ONLY]
    if result is not None:
        doc["diagnostics"] = [
            d.to_dict() for d in result.diagnostics if d.code.startswith("GRPO-Y") and d.severity == "error"
        ] + doc["diagnostics"]
    doc["ok"] = not any(d["severity"] == "error" for d in doc["diagnostics"])
    return doc


def _document(result: Any = None) -> dict[str, Any]:
    from grpo_schema.doctor import current

    return service_runs_document(current(), result)


@router.get(
    "/doctor",
    summary="The environment the service's runs use, against its TRL release",
    response_class=ConfigJSONResponse,
    responses={200: {"description": "grpo doctor's document: environment, ok, diagnostics"}},
)
async def doctor_environment() -> ConfigJSONResponse:
    return ConfigJSONResponse(await run_in_threadpool(_document))


@router.post(
    "/doctor",
    summary="Can the service's environment run this config",
    response_class=ConfigJSONResponse,
    responses={200: {"description": "grpo doctor's document for the config's features"}, **ERRORS},
    openapi_extra=config_body_doc(),
)
async def doctor_config(body: Body, params: Params) -> ConfigJSONResponse:
    """The config is read as POST /api/v1/validate reads it. The service never reads a path a client names: a
    `deepspeed:` file is not opened (its ZeRO stage is unknown) and reward modules are not looked up."""
    options = params.options()
    path = options.pop("path")
    if body.yaml is not None:
        result = await run_in_threadpool(lambda: check_text(body.yaml, path=path, suggest_fixes=False, **options))
    else:
        result = await run_in_threadpool(lambda: check_mapping(body.mapping, path=path, suggest_fixes=False, **options))
    return ConfigJSONResponse(await run_in_threadpool(_document, result))

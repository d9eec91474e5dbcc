"""POST /api/v1/emit: the SkyPilot task, dstack task or Kubernetes manifest of a config, as `grpo launch --emit`
writes it (grpo_runtime.clusters.emit: the same parser, layout and writer), for the form's Launch dialog.

The config is checked at its own world size, laid out over nodes (`num_machines`, `hardware:`, the vLLM server
node), then checked again at the layout's world size; a config that is invalid there is a 422 with every
diagnostic, a layout that does not split a 422 saying what to change. Nothing is submitted and nothing runs, so no
token is asked: like /api/v1/export it only writes text.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse

from grpo_schema import CheckResult, check_mapping, check_text
from grpo_schema.engine.check import Override
from grpo_schema.engine.profiles import Profile
from grpo_web.api.body import ConfigBody, config_body
from grpo_web.api.docs import config_body_doc, json_errors
from grpo_web.api.params import profile_params
from grpo_web.api.responses import ConfigJSONResponse

router = APIRouter(prefix="/api/v1", tags=["files"])
NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"  # a file or job name: no path, nothing a shell would read


def _check(
    body: ConfigBody, path: str, world_size: int | None, declared_size: int | None, profiles: list[str]
) -> CheckResult:
    options: dict = {"path": path, "world_size": world_size, "profiles": profiles}
    if declared_size:  # the form's world size stands for the file's num_processes
        options["overrides"] = [Override("num_processes", declared_size, "the form's world size")]
    if body.yaml is not None:
        return check_text(body.yaml, **options)
    return check_mapping(body.mapping, **options)


def emitted(
    body: ConfigBody, arguments: list[str], world_size: int | None, profiles: list[str]
) -> tuple[str, str] | CheckResult:
    """(the spec, its layout in words), or the CheckResult that refuses it. Raises ValueError for a layout that
    does not split."""
    from grpo_runtime.clusters.emit import LayoutError, emit, emit_parser, plan

    args = emit_parser().parse_args(arguments)
    declared = _check(body, args.file, None, world_size, profiles)
    if declared.config is None:
        return declared
    try:
        layout, accelerator = plan(declared, args.nodes, args.gpus_per_node, args.hardware)
    except LayoutError as error:
        raise ValueError(str(error)) from error
    result = _check(body, args.file, layout.world_size, world_size, profiles)
    if not result.valid or result.config is None:
        return result
    return emit(args, result, layout, accelerator), layout.describe()


@router.post(
    "/emit",
    summary="A scheduler's task or manifest for a config (grpo launch --emit)",
    response_class=PlainTextResponse,
    openapi_extra=config_body_doc(),
    responses={
        **json_errors(),
        200: {
            "content": {"application/yaml": {"schema": {"type": "string"}}},
            "description": "the spec; X-Grpo-Layout says its nodes and world size",
        },
        422: {
            "content": {"application/json": {"schema": {"type": "object"}}},
            "description": "the validate file object with every diagnostic, {detail} for a layout "
            "that does not split, or unusable query values",
        },
    },
)
async def emit_spec(
    body: Annotated[ConfigBody, Depends(config_body)],
    profiles: Annotated[tuple[Profile, ...], Depends(profile_params)],
    target: Annotated[Literal["skypilot", "dstack", "kubernetes"], Query(description="the scheduler")],
    k8s_form: Annotated[
        Literal["pytorchjob", "trainjob", "jobset", "indexed-job"],
        Query(description="the Kubernetes object (kubernetes only)"),
    ] = "pytorchjob",
    file: Annotated[
        str, Query(pattern=NAME, description="the config's file name in the project folder, which every node runs")
    ] = "config.yaml",
    nodes: Annotated[int | None, Query(ge=1, le=1024, description="training nodes")] = None,
    gpus_per_node: Annotated[int | None, Query(ge=0, le=64, description="GPUs per node")] = None,
    hardware: Annotated[
        str | None,
        Query(
            max_length=100,
            pattern=r"^[A-Za-z0-9 ._x-]+$",
            description="the nodes and GPUs, as hardware: (2x8xH100-80GB); default: the config's",
        ),
    ] = None,
    world_size: Annotated[
        int | None, Query(ge=1, le=65536, description="the form's world size, when the config names none")
    ] = None,
    name: Annotated[str | None, Query(pattern=NAME, description="the job's name")] = None,
    volume: Annotated[str | None, Query(pattern=NAME, description="the checkpoint volume or PVC")] = None,
) -> PlainTextResponse:
    """The same text `grpo launch --emit TARGET FILE` prints for the config saved as FILE (a config written for a
    training script's arguments names its profile: ?profile=open-r1)."""
    arguments = [file, "--emit", target, "--k8s-form", k8s_form]
    for flag, value in (
        ("--nodes", nodes),
        ("--gpus-per-node", gpus_per_node),
        ("--hardware", hardware),
        ("--name", name),
        ("--volume", volume),
    ):
        arguments += [flag, str(value)] if value is not None else []
    try:
        found = await run_in_threadpool(emitted, body, arguments, world_size, [p.name for p in profiles])
    except ValueError as error:
        raise HTTPException(422, str(error)) from None
    if isinstance(found, CheckResult):
        return ConfigJSONResponse(found.to_dict(), status_code=422)
    text, layout = found
    return PlainTextResponse(text, media_type="application/yaml; charset=utf-8", headers={"X-Grpo-Layout": layout})

"""A config checked for a run, and the answers that refuse it.

The config is validated as `grpo launch` will validate it (the operator's env allow-list as its --allow-env names,
the paths the service resolved as its --set values), local model and dataset paths that name nothing are refused
(GRPO-X010), and its output_dir and checkpoint are placed under the runs directory. A refusal is a 422 whose body is
the validate file object with every diagnostic; for an output_dir a finished run owns, with that run and whether
this config could resume it.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.concurrency import run_in_threadpool

from grpo_schema import CheckResult, check_mapping, check_text
from grpo_schema.engine.check import Override, bounded
from grpo_schema.engine.policy import ServicePolicy, output_dir_busy
from grpo_schema.engine.policy_paths import missing_local_paths, resolve_under
from grpo_schema.engine.resume import resume_target
from grpo_web.api.body import ConfigBody
from grpo_web.api.responses import ConfigJSONResponse
from grpo_web.runs import demo_assets, paths, resumable
from grpo_web.runs.manager import OutputOwned, RunManager


def _check(
    body: ConfigBody,
    world_size: int | None,
    path: str,
    allow_env: list[str],
    overrides: dict[str, str] | None = None,
    trl_version: tuple[str, str] | None = None,
) -> CheckResult:
    """Validate as `grpo launch` will, with the operator's env allow-list as its --allow-env names and the paths
    the service resolved as its --set values."""
    options: dict[str, Any] = {"path": path, "world_size": world_size, "allow_env": allow_env}
    if overrides:
        options["overrides"] = [
            Override(name, value, f"--set {name}=... (resolved from the service's folder)")
            for name, value in overrides.items()
        ]
    if trl_version is not None:
        options["trl_version"], options["trl_version_source"] = trl_version
    if body.yaml is not None:
        return check_text(body.yaml, **options)
    return check_mapping(body.mapping, **options)


def check_resolved(
    body: ConfigBody,
    world_size: int | None,
    path: str,
    allow_env: list[str],
    base: Path,
    trl_version: tuple[str, str] | None = None,
) -> tuple[CheckResult, dict[str, str]]:
    """Validate the config as it will run: its relative paths resolved against the service's folder
    (grpo_web.runs.paths), then checked again with them when there were any. Returns the result and the paths."""
    result = _check(body, world_size, path, allow_env, trl_version=trl_version)
    reads = paths.resolve_reads(result.config, base, result.launch) if result.config is not None else {}
    if reads:
        result = _check(body, world_size, path, allow_env, reads, trl_version)
    return result, reads


async def check_for_run(
    request: Request,
    body: ConfigBody,
    world_size: int | None,
    path: str,
    base: Path,
    trl_version: tuple[str, str] | None = None,
) -> tuple[CheckResult, dict[str, str], list]:
    """check_resolved for a run or a smoke test, plus GRPO-X010 for local model and dataset paths that name
    nothing. A config that reads the demo's paths waits while the service still writes them (demo_assets.py)."""
    allow_env = request.app.state.settings.runs_env_allowlist
    result, reads = await run_in_threadpool(check_resolved, body, world_size, path, allow_env, base, trl_version)
    demo = getattr(request.app.state, "demo_assets", None)
    if (
        demo is not None
        and result.config is not None
        and demo_assets.names_demo(result.config)
        and demo_assets.missing(base)
    ):
        await run_in_threadpool(demo.wait)
        result, reads = await run_in_threadpool(check_resolved, body, world_size, path, allow_env, base, trl_version)
    missing = missing_local_paths(result, base, reads)
    if demo is not None and demo.error:  # why the service could not write them itself
        missing = [
            dataclasses.replace(d, hint=f"{d.hint}; the service tried: {demo.error}")
            if "grpo demo demo" in (d.hint or "")
            else d
            for d in missing
        ]
    return result, reads, [bounded(d) for d in missing]


def stored_text(body: ConfigBody) -> tuple[str, str]:
    """The config as the run keeps it, and its format: the YAML as posted, or the JSON object written out."""
    if body.yaml is not None:
        return body.yaml.decode("utf-8"), "yaml"  # check_text accepted it, so it is UTF-8
    return json.dumps(body.mapping, indent=1, ensure_ascii=False) + "\n", "json"


def refused(
    result: CheckResult, extra: list, resolved: dict[str, str] | None = None, **more: Any
) -> ConfigJSONResponse:
    """The 422 answer: the validate file object with the refusals added, and the paths the service resolved."""
    document = result.to_dict()
    document["diagnostics"] += [d.to_dict() for d in extra]
    document["valid"] = False
    document["resolved_paths"] = resolved or {}
    document.update(more)
    return ConfigJSONResponse(document, status_code=422)


def output_owner(manager: RunManager, owned: OutputOwned, config_text: str) -> dict[str, Any]:
    """The run that owns the output_dir, and whether this config could resume it (the form's choices read it)."""
    owner = owned.owner
    verdict = resumable.verdict(manager.store, owner, config_text)
    return {
        "id": owner.id,
        "state": owner.state,
        "resume": verdict.to_dict(),
        "differences": config_differences(config_text, owner.config_text),
    }


# Keys a resume sets or that name the folder itself: not a difference between two runs' settings.
_SAME_RUN_KEYS = frozenset({"output_dir", "resume_from_checkpoint"})


def config_differences(this: str, that: str) -> list[dict[str, Any]]:
    """The top-level keys where the config `this` differs from the config `that` (a resume trains on with this
    one's settings from that run's checkpoint): [{key, this, that}], a key one of them leaves out as null."""
    from grpo_schema.engine.loader import load_yaml

    mine, theirs = (load_yaml(text).data for text in (this, that))
    mine, theirs = (value if isinstance(value, dict) else {} for value in (mine, theirs))
    return [
        {"key": key, "this": mine.get(key), "that": theirs.get(key)}
        for key in sorted(set(mine) | set(theirs))
        if key not in _SAME_RUN_KEYS and mine.get(key) != theirs.get(key)
    ]


def output_owned(result: CheckResult, owned: OutputOwned):
    """X007 for an output_dir a finished run owns: a second run would overwrite its checkpoints and model."""
    owner = owned.owner
    diag = output_dir_busy(result, owner.id, Path(owned.output_dir))
    return bounded(
        dataclasses.replace(
            diag,
            message=f"output_dir {owned.output_dir!r} belongs to run {owner.id} ({owner.state}); a new run there "
            "would overwrite its checkpoints and model",
            hint=f"leave output_dir unset (each run gets a folder of its own) or choose another; or launch with "
            f"?existing_output=resume to continue run {owner.id} from its last checkpoint, or "
            f"?existing_output=overwrite to delete its outputs and start again",
        )
    )


def warnings_text(result: CheckResult) -> str:
    """The diagnostics kept with the run (the runtime's warnings among them), as JSON."""
    return json.dumps([d.to_dict() for d in result.diagnostics], default=str)


def run_paths(config: Any, policy: ServicePolicy) -> tuple[Path | None, bool, Path | None]:
    """Where the run writes (output_dir under the runs directory), whether it resumes, and the checkpoint it resumes
    from when that is a folder."""
    output_dir = (
        resolve_under(policy.runs_dir, str(config.output_dir), policy.allow_outside_runs_dir)
        if config.output_dir is not None
        else None
    )
    resume = resume_target(config.resume_from_checkpoint)
    resume_path = (
        resolve_under(policy.runs_dir, resume, policy.allow_outside_runs_dir) if isinstance(resume, str) else None
    )
    return output_dir, resume is not None, resume_path

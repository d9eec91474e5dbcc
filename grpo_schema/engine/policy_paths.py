"""Where a posted config's paths lead, for the service policy: a run writes only under the operator's runs directory
(GRPO-X004), and a model or dataset written as a local path must name something (GRPO-X010). Nothing here reads or
writes what a path names; paths are only resolved (symlinks included) to see where they lead, and X010 looks only
whether one exists.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.policy_codes import X_MISSING_PATH, X_OUTSIDE, placed
from grpo_schema.engine.resume import resume_target

# The paths `grpo demo demo` writes, as the Demo recipe (examples/demo.yaml) names them.
DEMO_READS = {"model_name_or_path": "demo/model", "dataset_name": "demo/data"}
LOCAL_READS = ("model_name_or_path", "dataset_name", "reward_model_name_or_path")


def resolve_under(runs_dir: Path, value: str, allow_outside: bool = False) -> Path | None:
    """Where `value` leads for a service run: relative paths under runs_dir. None when that is not allowed:
    absolute, `~`, `..`, or a symlink that resolves outside (or onto) runs_dir."""
    if "\x00" in value:  # no such path anywhere, and resolve() raised ValueError (a 500 from POST /runs)
        return None
    root = runs_dir.resolve()
    path = Path(os.path.expanduser(value)) if allow_outside else Path(value)
    if allow_outside:
        return (path if path.is_absolute() else root / path).resolve()
    if path.is_absolute() or value.startswith("~") or ".." in path.parts:
        return None
    resolved = (root / path).resolve()
    return resolved if resolved != root and resolved.is_relative_to(root) else None


def outside_runs_dir(result: CheckResult, runs_dir: Path, allow_outside: bool) -> Iterator[Diagnostic]:
    """X004 for output_dir, from_pretrained's cache and offload folders and the checkpoint resumed from, where one
    leads outside the runs directory (unless the operator allows that)."""
    where = f"the runs directory {str(runs_dir)!r}"
    output_dir = result.config.output_dir
    if output_dir is not None and resolve_under(runs_dir, str(output_dir), allow_outside) is None:
        yield Diagnostic(
            X_OUTSIDE,
            "error",
            f"output_dir {str(output_dir)!r} leads outside {where}",
            fields=("output_dir",),
            hint="use a relative path without '..' (it is placed under the runs directory), or leave output_dir unset",
            fix=Fix(unset=("output_dir",), safe=False, title="let the service choose output_dir"),
        )
    kwargs = result.config.model_init_kwargs if isinstance(result.config.model_init_kwargs, dict) else {}
    for key in ("cache_dir", "offload_folder"):  # from_pretrained writes downloads and offloaded weights there
        value = kwargs.get(key)
        if isinstance(value, str) and resolve_under(runs_dir, value, allow_outside) is None:
            yield Diagnostic(
                X_OUTSIDE,
                "error",
                f"model_init_kwargs.{key} {value!r} leads outside {where}",
                fields=("model_init_kwargs",),
                hint=f"remove {key} from model_init_kwargs, or use a relative path without '..'",
            )
    resume = resume_target(result.config.resume_from_checkpoint)
    if isinstance(resume, str) and resolve_under(runs_dir, resume, allow_outside) is None:
        yield Diagnostic(
            X_OUTSIDE,
            "error",
            f"resume_from_checkpoint {resume!r} leads outside {where}",
            fields=("resume_from_checkpoint",),
            hint="resume with POST /api/v1/runs/{id}/resume, or write resume_from_checkpoint: true",
        )


def missing_local_paths(result: CheckResult, base: Path, resolved: dict[str, str]) -> list[Diagnostic]:
    """X010 for each model or dataset field written as a local path that names nothing: `resolved` holds the
    fields the service resolved against its folder `base` (grpo_web.runs.paths). The one check of this module that
    looks at the file system, and only to see whether the path exists."""
    if result.config is None:
        return []
    found = []
    for name in LOCAL_READS:
        value = getattr(result.config, name, None)
        if not isinstance(value, str) or not value or "\x00" in value:
            continue
        demo = DEMO_READS.get(name) == value
        local = name in resolved or demo or value.startswith(("/", "~", "./", "../"))
        path = Path(resolved.get(name) or os.path.expanduser(value))
        if local and not (path if path.is_absolute() else base / path).exists():
            found.append(placed(result, _missing(name, value, base, demo)))
    return found


def _missing(name: str, value: str, base: Path, demo: bool) -> Diagnostic:
    where = "" if os.path.isabs(os.path.expanduser(value)) else f" (read from the service's folder {str(base)!r})"
    hint = (
        (
            f"make the demo's model and prompts: run `grpo demo demo` in {str(base)!r} (a service with runs on "
            "does that when it starts unless GRPO_WEB_RUNS_PREPARE_DEMO=0)"
        )
        if demo
        else "write the path of an existing local folder, or a Hub name (`org/name`)"
    )
    return Diagnostic(
        X_MISSING_PATH,
        "error",
        f"{name} {value!r} is a local path that does not exist{where}; the run would take it for a Hub name and fail",
        fields=(name,),
        hint=hint,
    )

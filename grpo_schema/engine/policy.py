"""Service policy: what a config posted over HTTP may not do before the service starts a run with it.

A config that validates is safe for TRL, not necessarily for a service that starts processes for whoever holds
its token. `service_policy(result, policy)` adds coded diagnostics (area X, in the shape of every other
diagnostic) for what such a config must not do unless the operator allowed it:
importing code by dotted path, setting `env:` variables outside an allow-list, `trust_remote_code`, and
reading or writing outside the runs directory. Nothing here imports, reads or writes anything the config names;
paths are only resolved (symlinks included) to see where they lead.

The codes and where their diagnostics point are in policy_codes; where a config's paths lead (the runs directory,
local paths that name nothing) in policy_paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from grpo_schema.engine.check import CheckResult
from grpo_schema.engine.diagnostics import Diagnostic, Fix
from grpo_schema.engine.policy_codes import (
    X_BUSY,
    X_ENV,
    X_NODES,
    X_PROCESSES,
    X_PROFILE,
    X_PUSH,
    X_REMOTE_CODE,
    X_REWARD_IMPORT,
    placed,
)
from grpo_schema.engine.policy_paths import outside_runs_dir
from grpo_schema.engine.words import plural


@dataclass(frozen=True)
class ServicePolicy:
    """What the operator allows. The defaults refuse everything a client could use to run its own code."""

    runs_dir: Path
    reward_imports: frozenset[str] = frozenset()  # dotted reward paths allowed by name
    allow_reward_imports: bool = False  # any dotted reward path
    env_allowlist: frozenset[str] = frozenset()
    allow_trust_remote_code: bool = False
    allow_outside_runs_dir: bool = False
    max_processes: int = 1
    slurm_node_processes: int | None = None  # runs are Slurm jobs with this many processes per node
    slurm_max_nodes: int = 1
    allow_push_to_hub: bool = False


def service_policy(result: CheckResult, policy: ServicePolicy, profiles: Iterable[str] = ()) -> list[Diagnostic]:
    """The policy diagnostics for a checked config (empty when the service may run it)."""
    if result.config is None:
        return []
    found = [
        *_reward_imports(result, policy),
        *_env_names(result, policy),
        *_remote_code(result, policy),
        *outside_runs_dir(result, policy.runs_dir, policy.allow_outside_runs_dir),
        *_profiles(profiles),
        *_processes(result, policy),
        *_slurm_nodes(result, policy),
        *_push(result, policy),
    ]
    return [placed(result, diag) for diag in found]


def output_dir_busy(result: CheckResult, run_id: str, output_dir: Path) -> Diagnostic:
    """X007 for a config whose output_dir is the output_dir of a run still queued or running."""
    diag = Diagnostic(
        X_BUSY,
        "error",
        f"output_dir {str(output_dir)!r} is the output_dir of run {run_id}, which is still queued or running",
        fields=("output_dir",),
        hint=f"choose another output_dir, or cancel run {run_id} first",
    )
    return placed(result, diag)


def cluster_refusal(result: CheckResult, code: str, message: str, hint: str) -> Diagnostic:
    """A cluster that cannot take the run (a Ray cluster not reached, GRPO-U011, or too small for the world
    size, GRPO-U012), at the file's num_processes when it names one."""
    return placed(result, Diagnostic(code, "error", message, fields=("num_processes",), hint=hint))


def _reward_imports(result: CheckResult, policy: ServicePolicy) -> Iterator[Diagnostic]:
    if policy.allow_reward_imports:
        return
    for name in result.config.reward_funcs or []:
        if "." in name and name not in policy.reward_imports:
            allowed = ", ".join(sorted(policy.reward_imports)) or "none"
            yield Diagnostic(
                X_REWARD_IMPORT,
                "error",
                f"reward function {name!r} would be imported by dotted "
                f"path; this service does not import code named in a posted config",
                fields=("reward_funcs",),
                hint=f"use a built-in reward or one the operator allows ({allowed}); the operator can "
                "allow more with GRPO_WEB_RUNS_REWARD_IMPORTS",
            )


def _env_names(result: CheckResult, policy: ServicePolicy) -> Iterator[Diagnostic]:
    env = result.raw.get("env")
    if not isinstance(env, dict):
        return
    already = {f for d in result.diagnostics if d.severity == "error" for f in d.fields}
    allowed = ", ".join(sorted(policy.env_allowlist)) or "none"
    for name in env:
        field = f"env.{name}"
        if str(name) not in policy.env_allowlist and field not in already:
            yield Diagnostic(
                X_ENV,
                "error",
                f"env sets {name}, which this service does not allow in runs",
                fields=(field,),
                hint=f"remove it; allowed here: {allowed} (the operator sets GRPO_WEB_RUNS_ENV_ALLOWLIST)",
                fix=Fix(unset=(field,), safe=False, title=f"remove env.{name}"),
            )


def _remote_code(result: CheckResult, policy: ServicePolicy) -> Iterator[Diagnostic]:
    if policy.allow_trust_remote_code:
        return
    hint = "set it to false and use a model that transformers supports natively"
    if result.config.trust_remote_code:
        yield Diagnostic(
            X_REMOTE_CODE,
            "error",
            "trust_remote_code: true would run the model's own Python files in the training processes",
            fields=("trust_remote_code",),
            hint=hint,
            fix=Fix(set={"trust_remote_code": False}, safe=False, title="set trust_remote_code: false"),
        )
    kwargs = result.config.model_init_kwargs
    if isinstance(kwargs, dict) and kwargs.get("trust_remote_code"):
        yield Diagnostic(
            X_REMOTE_CODE,
            "error",
            "model_init_kwargs sets trust_remote_code, which would run the model's own Python files",
            fields=("model_init_kwargs",),
            hint="remove trust_remote_code from model_init_kwargs",
        )
    yield from _hub_kernels(result.config, kwargs if isinstance(kwargs, dict) else {})


def _hub_kernels(config: Any, kwargs: dict[str, Any]) -> Iterator[Diagnostic]:
    """transformers downloads compiled kernels from the Hub and runs them for an attn_implementation written as a
    repository id ('kernels-community/flash-attn') and for use_kernels: code from the Hub, as trust_remote_code."""
    for field, value in (
        ("attn_implementation", config.attn_implementation),
        ("model_init_kwargs", kwargs.get("attn_implementation")),
    ):
        if isinstance(value, str) and "/" in value:
            yield Diagnostic(
                X_REMOTE_CODE,
                "error",
                f"attn_implementation {value!r} is a kernels-hub repository: "
                "its compiled code would be downloaded and run in the training processes",
                fields=(field,),
                hint="use a built-in implementation: eager, sdpa or flash_attention_2",
            )
    if kwargs.get("use_kernels"):
        yield Diagnostic(
            X_REMOTE_CODE,
            "error",
            "model_init_kwargs sets use_kernels, which downloads kernels from the Hub and runs them",
            fields=("model_init_kwargs",),
            hint="remove use_kernels",
        )


def _profiles(profiles: Iterable[str]) -> Iterator[Diagnostic]:
    for name in profiles:
        kind = "a profile named by module path" if ":" in name else f"profile {name!r}"
        # "without a profile": the form offers its one-click "Use no profile" for these words.
        yield Diagnostic(
            X_PROFILE,
            "error",
            f"{kind} cannot be used for a service run: runs train with grpo_runtime, which reads TRL's keys only",
            hint="check and launch the config without a profile (no ?profile=)",
        )


def _processes(result: CheckResult, policy: ServicePolicy) -> Iterator[Diagnostic]:
    if result.world_size > policy.max_processes:
        most = policy.max_processes
        fields = ("num_processes",) if "num_processes" in result.raw else ()
        # The hint names "world size N" (the form's world-size button); a file that declares num_processes gets
        # the edit of it as the fix.
        yield Diagnostic(
            X_PROCESSES,
            "error",
            f"the run asks for {plural(result.world_size, 'process')}; this service starts at most {most}",
            fields=fields,
            hint=f"use world size {most} or fewer (the operator sets the limit: GRPO_WEB_RUNS_MAX_PROCESSES)",
            fix=Fix(set={"num_processes": most}, safe=False, title=f"set num_processes: {most}") if fields else None,
        )


def slurm_nodes(world_size: int, node_processes: int) -> int | None:
    """Nodes of a run on the operator's Slurm nodes: whole nodes, or one node holding the whole run."""
    if world_size <= node_processes:
        return 1
    return world_size // node_processes if world_size % node_processes == 0 else None


def _slurm_nodes(result: CheckResult, policy: ServicePolicy) -> Iterator[Diagnostic]:
    per_node = policy.slurm_node_processes
    if per_node is None:
        return
    nodes = slurm_nodes(result.world_size, per_node)
    fields = ("num_processes",) if "num_processes" in result.raw else ()
    if nodes is None:
        yield Diagnostic(
            X_NODES,
            "error",
            f"world size {result.world_size} is not a whole number of this service's "
            f"Slurm nodes ({per_node} training processes each)",
            fields=fields,
            hint=f"use a multiple of {per_node}, or at most {per_node}",
        )
    elif nodes > policy.slurm_max_nodes:
        yield Diagnostic(
            X_NODES,
            "error",
            f"world size {result.world_size} needs {nodes} Slurm nodes of {per_node} "
            f"processes; this service gives a run at most {policy.slurm_max_nodes}",
            fields=fields,
            hint=f"use a world size of at most {per_node * policy.slurm_max_nodes} (GRPO_WEB_RUNS_SLURM_MAX_NODES)",
        )


def _push(result: CheckResult, policy: ServicePolicy) -> Iterator[Diagnostic]:
    if result.config.push_to_hub and not policy.allow_push_to_hub:
        yield Diagnostic(
            X_PUSH,
            "error",
            "push_to_hub: true would upload the model with the service's Hub token",
            fields=("push_to_hub",),
            hint="set push_to_hub: false and upload the run's output_dir "
            "yourself; the operator can allow pushing with GRPO_WEB_RUNS_ALLOW_PUSH_TO_HUB",
            fix=Fix(set={"push_to_hub": False}, safe=False, title="set push_to_hub: false"),
        )

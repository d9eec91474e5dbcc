"""`grpo doctor`: the environment that will run a config, judged against its TRL release and the features the
config uses. Packages are read from metadata (doctor.environment), never imported; the rules (doctor.rules) and
the known-bad table (doctor.known_bad) turn them into diagnostics with the pin that fixes each problem."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grpo_schema.engine.diagnostics import Diagnostic

from .environment import Environment, EnvironmentError_, current, read


@dataclass
class DoctorReport:
    environment: Environment
    release: str | None  # the TRL release the environment was judged as (None: no trl and nothing to judge)
    file_release: str
    file_release_source: str
    diagnostics: list[Diagnostic] = field(default_factory=list)  # about the config and the environment
    file_diagnostics: list[Diagnostic] = field(default_factory=list)  # about the freeze/requirements file's lines
    features: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics + self.file_diagnostics)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "environment": self.environment.to_dict(),
            "trl_release": self.release,
            "file_trl_version": self.file_release,
            "file_trl_version_source": self.file_release_source,
            "features": self.features,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "file_diagnostics": [d.to_dict() for d in self.file_diagnostics],
        }


def diagnose(
    env: Environment,
    config: dict[str, Any] | None = None,
    config_path: str | None = None,
    file_release: str | None = None,
    file_release_source: str = "default",
    position: Any = None,
    local_files: bool = True,
) -> DoctorReport:
    """Every doctor rule over one environment and (optionally) one loaded config.

    `file_release` / `file_release_source`: the release the file is judged for and where that came from (as
    `grpo validate` reports it); when it came from no flag, comment or pin, the environment's own trl decides."""
    from grpo_schema.versions.detect import DEFAULT

    from . import rules

    installed = env.version("trl")
    # A Python file's own install line (`!pip install trl==X`) and Unsloth's range declare a release as a pin does.
    declared = file_release_source in ("flag", "comment", "requirements") or file_release_source.startswith(
        ("the file's install line", "the trl range")
    )
    if not declared or file_release is None:
        file_release, file_release_source = (installed, "environment") if installed else (DEFAULT, "default")
    release = rules.tabled_release(installed) if installed else rules.tabled_release(file_release)
    ctx = rules.Context(
        env=env,
        release=release,
        file_release=file_release,
        file_release_source=file_release_source,
        config=dict(config or {}),
        config_path=config_path,
        position=position or (lambda key: None),
        local_files=local_files,
    )
    diagnostics: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    for rule in rules.RULES:
        for diag in rule(ctx):
            if (diag.code, diag.message) not in seen:
                seen.add((diag.code, diag.message))
                diagnostics.append(diag)
    problems = list(rules.file_problems(ctx))
    file_diags = [d for d in problems if d.line is not None]
    diagnostics += [d for d in problems if d.line is None]
    return DoctorReport(
        env, release, file_release, file_release_source, diagnostics, file_diags, sorted(rules.features(ctx))
    )


__all__ = ["DoctorReport", "Environment", "EnvironmentError_", "current", "diagnose", "read"]

"""What a doctor rule reads: the TRL release's committed requirements (versions/releases/requirements.json), the
`Context` of one check, a requirement line judged against the environment, and the registry rules join with
`@doctor_rule(code, severity)`, which declares the code beside the rule as `@rule` does for a config rule: the
docstring's first line is the code's title, the rest its explanation (`grpo codes CODE`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterator

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from grpo_schema.engine.codes import CODES, declare
from grpo_schema.engine.diagnostics import Diagnostic, Severity
from grpo_schema.versions.tables import RELEASES_DIR

from .environment import Environment, canonical

# --- the release's requirements -----------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _requirements() -> dict[str, Any]:
    with open(RELEASES_DIR / "requirements.json", encoding="utf-8") as fh:
        return json.load(fh)["releases"]


def parse_version(text: str | None) -> Version | None:
    if text is None:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def tabled_release(version: str) -> str:
    """The tabled release standing for an installed version: itself, else the tabled release of its minor, else
    the newest table below it (a release newer than every table: the newest)."""
    table = _requirements()
    if version in table:
        return version
    wanted = parse_version(version)
    ordered = sorted(table, key=Version)
    if wanted is None:
        return ordered[-1]
    same_minor = [r for r in ordered if Version(r).release[:2] == wanted.release[:2]]
    if same_minor:
        return same_minor[-1]
    below = [r for r in ordered if Version(r) <= wanted]
    return below[-1] if below else ordered[0]


def release_data(version: str) -> dict[str, Any]:
    return _requirements()[tabled_release(version)]


# --- the context a rule reads -------------------------------------------------------------------------------------


@dataclass
class Context:
    env: Environment
    release: str | None  # the TRL release judged (the installed one; else the one the file is for)
    file_release: str  # the release the file is judged for (flag / comment / pin / installed / default)
    file_release_source: str
    config: dict[str, Any] = field(default_factory=dict)  # the config as loaded (empty: environment only)
    config_path: str | None = None
    position: Callable[[str], tuple[int, int] | None] = lambda key: None
    local_files: bool = True  # False (the service): never read or look up a path the config names

    def diag(self, code: str, message: str, keys: tuple[str, ...] = (), pin: str = "", hint: str = "") -> Diagnostic:
        pos = None
        for key in keys:
            pos = self.position(key)
            if pos:
                break
        if pin and not hint:
            hint = f"write `{pin}` in the environment's requirements (pip install '{pin}')"
        elif pin:
            hint = f"write `{pin}` in the environment's requirements; {hint}"
        return Diagnostic(
            code,
            CODES[code].severity,
            message,
            fields=keys,
            line=pos[0] if pos else None,
            column=pos[1] if pos else None,
            hint=hint,
        )


def _marker_env(ctx: Context) -> dict[str, str]:
    out = {}
    if ctx.env.python_version:
        parts = ctx.env.python_version.split(".")
        out = {"python_version": ".".join(parts[:2]), "python_full_version": ctx.env.python_version}
    return out


def _applies(ctx: Context, marker: str | None) -> bool:
    if not marker:
        return True
    try:
        return Marker(marker).evaluate({**_marker_env(ctx), "extra": ""})
    except (InvalidMarker, Exception):  # an unknown marker variable: take the requirement as applying
        return True


def parse_requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


UNPINNED = declare(
    "GRPO-C017",
    "info",
    "version not pinned",
    "A requirements file lists the package without an exact version, so which release gets installed "
    "(and whether it satisfies the check) is up to the resolver; pin it.",
)


def check_requirement(ctx: Context, text: str, code: str, why: str, keys: tuple[str, ...] = ()) -> Iterator[Diagnostic]:
    """One requirement line (`vllm<=0.31.0,>=0.22.0; python_version < "3.13"`) against the environment."""
    req = parse_requirement(text)
    if req is None or not _applies(ctx, str(req.marker) if req.marker else None):
        return
    name = canonical(req.name)
    pin = f"{req.name}{req.specifier}" if str(req.specifier) else req.name
    pkg = ctx.env.get(name)
    if pkg is None:
        yield ctx.diag(code, f"{why} needs {pin}, which is not installed in {where(ctx)}", keys, pin)
        return
    if not str(req.specifier):
        return
    if pkg.version is None:
        if pkg.spec is not None:
            yield ctx.diag(UNPINNED, f"{name} is listed as {name}{pkg.spec}, not pinned; {why} needs {pin}", keys, pin)
        return
    version = parse_version(pkg.version)
    if version is None:
        yield ctx.diag(code, f"{name} {pkg.version} is not a version {why} can be checked against ({pin})", keys, pin)
        return
    if not req.specifier.contains(version, prereleases=True):
        yield ctx.diag(code, f"{why} needs {pin}; {where(ctx)} has {pkg.described()}", keys, pin)


def where(ctx: Context) -> str:
    return {
        "current": "this environment",
        "python": "the environment of " + ctx.env.origin,
        "freeze": ctx.env.origin,
        "requirements": ctx.env.origin,
    }.get(ctx.env.source, "the environment")


def extra_requirements(ctx: Context, name: str) -> list[str]:
    if ctx.release is None:
        return []
    return list(release_data(ctx.release)["extras"].get(name) or [])


def extra_requirement(ctx: Context, extra: str, package: str, fallback: str) -> str:
    for text in extra_requirements(ctx, extra):
        req = parse_requirement(text)
        if req is not None and canonical(req.name) == canonical(package):
            return text
    return fallback


# --- the rules ----------------------------------------------------------------------------------------------------

DoctorRuleFn = Callable[[Context], Iterator[Diagnostic]]
RULES: list[DoctorRuleFn] = []  # in the order they are defined: the order of the report


def doctor_rule(code: str, severity: Severity) -> Callable[[DoctorRuleFn], DoctorRuleFn]:
    """Register an environment rule and declare its code; the first docstring line is the code's title."""

    def register(fn: DoctorRuleFn) -> DoctorRuleFn:
        doc = (fn.__doc__ or fn.__name__).strip().splitlines()
        declare(code, severity, doc[0].rstrip("."), " ".join(line.strip() for line in doc[1:]) or doc[0])
        RULES.append(fn)
        return fn

    return register

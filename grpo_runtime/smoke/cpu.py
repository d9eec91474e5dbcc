"""The CPU a smoke test runs on, as the report names it: the instruction-set features that decide which attention
kernels an engine picks (vLLM's CPU attention has AMX, AVX-512 and generic vector variants, each built for a list
of head sizes). Read from /proc/cpuinfo's flags (Linux); nothing is probed by running code."""

from __future__ import annotations

import platform
from pathlib import Path

# The flags that choose an engine's CPU kernels, in the order they are named.
KERNEL_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile", "asimd", "sve", "sve2")


def cpu_features(cpuinfo: str | None = None) -> list[str]:
    """The kernel-choosing flags of the first processor in `cpuinfo` (default: this machine's /proc/cpuinfo)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() in ("flags", "features"):  # x86 says flags, arm64 says Features
            present = set(value.split())
            return [flag for flag in KERNEL_FLAGS if flag in present]
    return []


def cpu_description(cpuinfo: str | None = None) -> str:
    features = cpu_features(cpuinfo)
    return f"{platform.machine() or 'unknown'} with " + (
        ", ".join(features) if features else "none of " + ", ".join(KERNEL_FLAGS)
    )

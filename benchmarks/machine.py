"""The machine, the versions and the load a run was measured under."""

from __future__ import annotations

import os
import platform
import subprocess

from benchmarks.common import REPO
from grpo_runtime.outputs.run_info import versions as run_versions

PACKAGES = (
    "torch",
    "transformers",
    "trl",
    "accelerate",
    "pydantic",
    "pydantic-core",
    "PyYAML",
    "fastapi",
    "uvicorn",
    "starlette",
    "h11",
    "httptools",
    "uvloop",
)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def ram_gib() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# A ratio taken while other work competes for the cores is compressed towards a floor and is not a result. The
# 1-minute load average is the signal: above a quarter of a process per core, the machine counts as busy.
BUSY_LOAD_PER_CORE = 0.25


def busy_threshold() -> float:
    return BUSY_LOAD_PER_CORE * (os.cpu_count() or 1)


def wait_for_idle(timeout_s: float, poll_s: float = 5.0) -> tuple[list[float], bool]:
    """Wait up to `timeout_s` for the 1-minute load average to fall below the busy threshold (a previous section's
    own load decays within a minute or two). Returns (the load average at the end, whether the machine is busy)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        load = load_average()
        if load[0] < busy_threshold() or time.monotonic() >= deadline:
            return load, load[0] >= busy_threshold()
        time.sleep(poll_s)


def versions() -> dict[str, str]:
    return run_versions(PACKAGES, missing="not installed")


def git_commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    dirty = git("status", "--porcelain", "--", "grpo_schema", "grpo_runtime", "web")
    return commit + (" + uncommitted changes in grpo_schema/grpo_runtime/web" if dirty else "")


def describe() -> dict:
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": round(ram_gib(), 1),
        "os": f"{platform.system()} {platform.release()}",
        "versions": versions(),
        "commit": git_commit(),
    }

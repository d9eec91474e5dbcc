"""Shared helpers: child processes timed with their own peak memory, robust statistics, the example files."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
PYTHON = sys.executable
BIN = Path(PYTHON).parent  # the venv's bin/, where the `grpo` console script lives

# Example recipes (examples/) that TRL 1.16 also accepts at world size 1, where its parser runs (so both sides do
# their complete work), small to large. They name their own world size; grpo-config checks them at it.
FILES = {"grpo-no-kl.yaml": (), "dapo.yaml": (), "eval-during-training.yaml": (), "dataset-mixture.yaml": ()}
QUICK_FILES = ("grpo-no-kl.yaml",)


def benchmark_files(quick: bool) -> dict[str, tuple[Path, tuple[str, ...]]]:
    names = QUICK_FILES if quick else tuple(FILES)
    return {name: (EXAMPLES / name, FILES[name]) for name in names}


def child_env(**extra: str) -> dict[str, str]:
    """Children run offline, quiet and with the repository importable (benchmarks.* and our packages)."""
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        TRANSFORMERS_VERBOSITY="error",
        TOKENIZERS_PARALLELISM="false",
        PYTHONWARNINGS="ignore",
    )
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


@dataclass
class ChildRun:
    wall_s: float
    cpu_s: float  # user + system time of the child: less sensitive than wall time to other processes' load
    peak_rss_mb: float
    returncode: int


def timed_child(argv: list[str], ok_codes: tuple[int, ...] = (0,), timeout: float = 120) -> ChildRun:
    """Run argv to completion; wall time from spawn to reap, peak RSS of that process (ru_maxrss of wait4)."""
    errors = tempfile.TemporaryFile()  # a file, not a pipe: a chatty child cannot block on a full pipe
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=REPO, env=child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors
    )
    # A blocking wait4 keeps the wall time exact; a timer kills a child that hangs.
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    errors.seek(0)
    stderr = errors.read().decode(errors="replace")
    errors.close()
    if proc.returncode not in ok_codes:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {stderr[-2000:]}")
    return ChildRun(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode)


def run_json_child(argv: list[str], timeout: float = 900, **env: str) -> dict:
    """Run a child that prints one JSON document as its last stdout line."""
    import json

    done = subprocess.run(argv, cwd=REPO, env=child_env(**env), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "min": ordered[0], "max": ordered[-1], "n": len(ordered)}


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (q in [0, 100])."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), math.ceil(q / 100 * len(sorted_values))))
    return sorted_values[rank - 1]


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else float("nan")

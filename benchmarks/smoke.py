"""`grpo smoke` on every example and on the shared corpus's run files that `grpo train --dry-run` accepts: wall time
and verdict per file (target: a typical recipe under 2 minutes on 2 CPU cores). Each file is one whole
`grpo smoke FILE --format json` process, as a user or CI runs it. The corpus part runs only where ../shared is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import EXAMPLES, REPO

TARGET_S = 120.0
CORPUS = REPO.parent / "shared" / "grpo-corpus" / "valid"


def grpo(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grpo_schema.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def corpus_recipes() -> list[Path]:
    """The corpus files that are whole runs: those `grpo train --dry-run` accepts."""
    if not CORPUS.is_dir():
        return []
    with tempfile.TemporaryDirectory() as cwd:
        return [p for p in sorted(CORPUS.glob("*.yaml")) if grpo("train", str(p), "--dry-run", cwd=cwd).returncode == 0]


def measure(files=None, steps: int = 2, corpus: bool = True) -> dict:
    rows = []
    every = files or [*sorted(EXAMPLES.glob("*.yaml")), *(corpus_recipes() if corpus else [])]
    for path in every:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as cwd:
            done = grpo("smoke", str(path), "--format", "json", "--steps", str(steps), cwd=cwd)
        seconds = time.perf_counter() - started
        try:
            report = json.loads(done.stdout)
        except ValueError:
            report = {"passed": False, "exit_code": done.returncode, "component": "process"}
        rows.append({"file": path.name if path.parent == EXAMPLES else f"corpus/{path.name}", "seconds": round(seconds, 1), "passed": report["passed"],
                     "exit_code": report["exit_code"], "component": report.get("component"),
                     "world_size": report.get("world_size")})
    slowest = max((r["seconds"] for r in rows), default=0.0)
    return {"rows": rows, "targets": {
        f"every example and corpus recipe smoke-passes in under {TARGET_S:.0f}s": {
            "value": f"{sum(r['passed'] for r in rows)}/{len(rows)} passed, slowest {slowest:.0f}s",
            "met": all(r["passed"] for r in rows) and slowest < TARGET_S}}}


def render(section: dict) -> list[str]:
    lines = ["## grpo smoke (the examples and the corpus recipes, 2 steps with a resume, CPU)", "",
             "| file | seconds | passed | exit | world size | failed component |", "|---|---|---|---|---|---|"]
    for row in section["rows"]:
        lines.append(f"| {row['file']} | {row['seconds']} | {'yes' if row['passed'] else '**no**'} | "
                     f"{row['exit_code']} | {row['world_size']} | {row['component'] or ''} |")
    return lines + [""]

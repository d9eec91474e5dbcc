"""`grpo smoke` on every example and on the shared corpus's whole run files: wall time and verdict per file (target:
each under 2 minutes on an idle 2-core machine), then every file again beside a CPU-bound process, its report
compared with the first (target: the same report but for `seconds`). Each file is one whole
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
    return subprocess.run(
        [sys.executable, "-m", "grpo_schema.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def corpus_recipes(folder: Path | None = None) -> list[Path]:
    """The corpus files that are whole runs, as a user has them after `grpo migrate`: each copied into `folder`,
    migrated (under open-r1's profile, which only adds its keys), and kept when it names a model and validates
    (as written or under --profile open-r1; at world size 1, 8 or 7). Recipes for 7 or 8 GPUs, or with vLLM, are among them: the smoke
    substitutes what this machine cannot run."""
    if not CORPUS.is_dir():
        return []
    folder = folder or Path(tempfile.mkdtemp(prefix="grpo-smoke-corpus-"))
    kept = []
    for source in sorted(CORPUS.glob("*.yaml")):
        target = folder / source.name
        target.write_bytes(source.read_bytes())
        grpo("migrate", "--profile", "open-r1", "--write", str(target), cwd=str(folder))
        text = target.read_text(encoding="utf-8", errors="replace")
        if not any(line.startswith("model_name_or_path:") for line in text.splitlines()):
            continue
        judged = (
            [*profile, *size, str(target)]
            for size in ([], ["--world-size", "8"], ["--world-size", "7"])
            for profile in ([], ["--profile", "open-r1"])
        )  # recipes written for 7 or 8 GPUs validate there
        if any(grpo("validate", *argv, cwd=str(folder)).returncode == 0 for argv in judged):
            kept.append(target)
    return kept


def smoke_once(path: Path, steps: int) -> tuple[float, dict]:
    """(wall seconds, the JSON report) of one `grpo smoke` process, in a fresh working folder."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as cwd:
        done = grpo("smoke", str(path), "--format", "json", "--steps", str(steps), cwd=cwd)
    seconds = time.perf_counter() - started
    try:
        return seconds, json.loads(done.stdout)
    except ValueError:
        return seconds, {"passed": False, "exit_code": done.returncode, "component": "process"}


def comparable(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "seconds"}


def beside_a_busy_process(paths: list[Path], steps: int) -> list[tuple[float, dict]]:
    busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
    try:
        return [smoke_once(path, steps) for path in paths]
    finally:
        busy.kill()
        busy.wait()


def measure(files=None, steps: int = 2, corpus: bool = True, twice: bool = True) -> dict:
    rows = []
    every = files or [*sorted(EXAMPLES.glob("*.yaml")), *(corpus_recipes() if corpus else [])]
    first = [smoke_once(path, steps) for path in every]
    idle_load = os.getloadavg()
    again = beside_a_busy_process(every, steps) if twice else [(None, None)] * len(every)
    for path, (seconds, report), (busy_seconds, busy_report) in zip(every, first, again):
        rows.append(
            {
                "file": path.name if path.parent == EXAMPLES else f"corpus/{path.name}",
                "seconds": round(seconds, 1),
                "passed": report["passed"],
                "exit_code": report["exit_code"],
                "component": report.get("component"),
                "world_size": report.get("world_size"),
                "busy_seconds": None if busy_seconds is None else round(busy_seconds, 1),
                "same_report": None if busy_report is None else comparable(report) == comparable(busy_report),
            }
        )
    slowest = max((r["seconds"] for r in rows), default=0.0)
    slowest_file = max(rows, key=lambda r: r["seconds"])["file"] if rows else None
    # exit 3: refused before anything starts, and said why (a reward of an open-r1 experiment branch, ...)
    refused = [r for r in rows if r["exit_code"] == 3]
    failed = [r for r in rows if not r["passed"] and r["exit_code"] != 3]
    targets = {
        f"every example and corpus recipe smokes in under {TARGET_S:.0f}s, none fails while running": {
            "value": f"{sum(r['passed'] for r in rows)}/{len(rows)} passed, {len(refused)} refused before "
            f"starting (named), {len(failed)} failed; slowest {slowest:.0f}s ({slowest_file})",
            "met": not failed and slowest < TARGET_S,
        }
    }
    if twice:
        differing = [r["file"] for r in rows if not r["same_report"]]
        targets["the same report again beside a CPU-bound process"] = {
            "value": f"{len(rows) - len(differing)}/{len(rows)} the same"
            + (f" (differ: {', '.join(differing)})" if differing else ""),
            "met": not differing,
        }
    return {
        "rows": rows,
        "slowest": {"file": slowest_file, "seconds": slowest},
        "load_average": idle_load,
        "load_average_busy": os.getloadavg() if twice else None,
        "targets": targets,
    }


def render(section: dict) -> list[str]:
    slowest = section.get("slowest") or {}
    lines = [
        "## grpo smoke (the examples and the corpus recipes, 2 steps with a resume, CPU)",
        "",
        f"Slowest: {slowest.get('file')} ({slowest.get('seconds')} s); load average after the first pass "
        f"{[round(x, 2) for x in section.get('load_average', [])]}"
        + (
            f", after the pass beside a CPU-bound process {[round(x, 2) for x in section['load_average_busy']]}"
            if section.get("load_average_busy")
            else ""
        )
        + ".",
        "",
        "| file | seconds | passed | exit | world size | failed component | seconds beside a busy process | "
        "same report |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in section["rows"]:
        same = {None: "", True: "yes", False: "**no**"}[row.get("same_report")]
        lines.append(
            f"| {row['file']} | {row['seconds']} | {'yes' if row['passed'] else '**no**'} | "
            f"{row['exit_code']} | {row['world_size']} | {row['component'] or ''} | "
            f"{row.get('busy_seconds') or ''} | {same} |"
        )
    return lines + [""]

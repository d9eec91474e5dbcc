"""TRL's files in a run's output directory, read as data: trainer_state.json (its log_history, of the directory or
of its newest readable checkpoint, a newer one that cannot be read named with the byte where it breaks) and the
completion tables log_completions writes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grpo_schema.engine.words import plural

if TYPE_CHECKING:
    from grpo_schema.health.monitor import HealthMonitor
    from grpo_schema.health.rundir import HealthReport

TRAINER_STATE = "trainer_state.json"


def broken_json(path: Path, exc: Exception, size: int) -> str:
    """`PATH: not JSON: it breaks at byte N of M (line L, column C): truncated?`"""
    where = getattr(exc, "pos", None)
    if where is None:
        return f"{path}: not JSON ({str(exc).split(':')[0]})"
    cut = where >= size - 1 or getattr(exc, "msg", "").startswith("Unterminated")
    ended = ": the file ends there, truncated (a write cut short, a full disk)" if cut else ""
    return (
        f"{path}: not JSON: it breaks at byte {where} of {size} (line {getattr(exc, 'lineno', '?')}, column "
        f"{getattr(exc, 'colno', '?')}){ended}"
    )


def newest_trainer_state(directory: Path, report: HealthReport) -> Path | None:
    """The trainer_state.json with the most steps: the directory's own (written at the end) or its newest
    checkpoint's (a run still training, or one that saved no final state). One that cannot be read is said in
    the report: as the reason another, older one was read, or as the error when none can be."""
    candidates = [directory / TRAINER_STATE] + sorted(
        directory.glob(f"checkpoint-*/{TRAINER_STATE}"), key=checkpoint_number
    )
    best, best_step, broken = None, -1, []
    for candidate in candidates:
        if not candidate.is_file():
            continue
        state, problem = read_state(candidate)
        if problem:
            broken.append((candidate, problem))
            continue
        step = state.get("global_step") if isinstance(state.get("global_step"), int) else 0
        if step > best_step:
            best, best_step = candidate, step
    if best is None:
        report.errors += [problem for _, problem in broken]
        return None
    newer = [(path, problem) for path, problem in broken if checkpoint_number(path) > checkpoint_number(best)]
    for _, problem in newer:
        report.notes.append(
            f"{problem}; read {best.relative_to(directory)} (step {best_step}) instead: the run "
            f"is judged up to step {best_step}"
        )
    return best


def checkpoint_number(path: Path) -> int:
    """checkpoint-N/trainer_state.json -> N; the directory's own state counts as the newest."""
    name = path.parent.name
    if name.startswith("checkpoint-") and name.removeprefix("checkpoint-").isdigit():
        return int(name.removeprefix("checkpoint-"))
    return 1 << 62


def read_state(path: Path) -> tuple[dict, str]:
    """(the trainer state, "") or ({}, what is wrong with it)."""
    data = path.read_bytes()
    try:
        state = json.loads(data)  # Python's json reads TRL's NaN and Infinity
    except (ValueError, UnicodeDecodeError) as exc:
        return {}, broken_json(path, exc, len(data))
    if not isinstance(state, dict) or not isinstance(state.get("log_history"), list):
        return {}, f"{path}: not a trainer state (no log_history list)"
    return state, ""


def read_trainer_state(state_path: Path, monitor: HealthMonitor, report: HealthReport) -> None:
    state, problem = read_state(state_path)
    if problem:
        report.errors.append(problem)
        return
    for record in state["log_history"]:
        monitor.observe_metrics(record)
    for name in ("max_steps", "logging_steps"):
        if isinstance(state.get(name), int):
            monitor.history.config.setdefault(name, state[name])


def read_trl_completions(directory: Path, monitor: HealthMonitor, report: HealthReport) -> None:
    files = sorted((directory / "completions").glob("completions_*.parquet"))
    if not files:
        return
    try:
        import pyarrow.parquet as pq
    except ImportError:
        report.notes.append(
            f"{directory / 'completions'}: {plural(len(files), 'parquet file')} not read: "
            "pyarrow is not installed (pip install pyarrow)"
        )
        return
    fixed = {"step", "prompt", "completion", "advantage", "image", "images"}
    for path in files:
        try:
            table = pq.read_table(path).to_pylist()
        except Exception as exc:  # a file TRL was still writing, or not parquet: say so and read the others
            report.notes.append(f"{path}: not read ({type(exc).__name__}: {exc})")
            continue
        monitor.history.none_includes_nan = True
        monitor.observe_completions(trl_rows(table, fixed))


def trl_rows(table: list[dict[str, Any]], fixed: set[str]) -> list[dict[str, Any]]:
    """TRL's completion table (a column per reward function, no total) in grpo_runtime's row shape. The total is
    the sum of the finite scores: weights are not in the table, and a group is flat exactly when every
    function's scores are equal across it, which the unweighted sum keeps."""
    rows = []
    for record in table:
        rewards = {
            name: value
            for name, value in record.items()
            if name not in fixed and (value is None or isinstance(value, (int, float)))
        }
        finite = [v for v in rewards.values() if isinstance(v, (int, float)) and not math.isnan(v)]
        rewards = {name: None if value is None or math.isnan(value) else value for name, value in rewards.items()}
        rows.append(
            {
                "step": record.get("step"),
                "prompt": str(record.get("prompt")),
                "completion": str(record.get("completion")),
                "rewards": rewards,
                "reward": sum(finite) if finite else None,
            }
        )
    return rows

"""Read a run's directory, as grpo_runtime or TRL wrote it, into a HealthMonitor, and report.

Nothing is written into the run's directory, and nothing in it is executed: files are read as data. A
directory that is not a run, a corrupt metrics line, a run still being written, a parquet file without pyarrow:
a finding or an error message in the report, never an exception.

grpo_runtime: metrics.jsonl, completions.jsonl (log_completions) or completions-sample.jsonl, run_info.json
(resumes), grpo_config.yaml (the config, for fixes). TRL: trainer_state.json (log_history) of the directory or of
its newest checkpoint, and completions/completions_*.parquet (log_completions).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpo_schema.engine.codes import declare
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.health.findings import HealthFinding
from grpo_schema.health.monitor import HealthMonitor
from grpo_schema.health.settings import HealthSettings

A_BAD_LINE = declare("GRPO-A090", "warning", "metrics line that is not a record",
                     "A line of the run's metrics file is not a JSON object (a truncated write, a disk that "
                     "filled, two writers at once). The line is skipped; the other lines are judged.")
A_NO_METRICS = declare("GRPO-A091", "info", "no metric the health rules read",
                       "The run logged records, but none of the metrics the health rules read (reward, "
                       "frac_reward_zero_std, loss, grad_norm, completions/*). The run may be from a trainer that "
                       "names them differently, or have logged nothing yet.")

METRICS_FILE = "metrics.jsonl"
EVENTS_FILE = "run_events.jsonl"  # grpo_runtime: what happened to the run beside its metrics (a divergence)
TRAINER_STATE = "trainer_state.json"
KNOWN = ("loss", "grad_norm", "reward", "frac_reward_zero_std", "completions/mean_length", "learning_rate")


@dataclass
class HealthReport:
    path: str
    source: str  # "grpo_runtime", "trl" or "" when the path is not a run
    steps: int = 0  # the last optimizer step seen
    findings: list[HealthFinding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # what could not be read: the run was not judged (exit 2)
    notes: list[str] = field(default_factory=list)  # what was read partly, and why
    metrics_file: str | None = None
    live: bool = False  # the run's last line was still being written

    @property
    def healthy(self) -> bool:
        return not self.errors and not any(f.severity in ("error", "warning") for f in self.findings)

    @property
    def diagnostics(self) -> list[Diagnostic]:  # for the github and sarif renderers
        return [f.diagnostic for f in self.findings]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "source": self.source, "steps": self.steps, "healthy": self.healthy,
                "live": self.live, "metrics_file": self.metrics_file,
                "findings": [f.to_dict() for f in self.findings], "errors": list(self.errors),
                "notes": list(self.notes)}


def check_run_dir(path: str | Path, settings: HealthSettings | None = None,
                  config: dict[str, Any] | None = None) -> HealthReport:
    """Judge the run in `path` (a run directory, or its metrics.jsonl / trainer_state.json)."""
    path = Path(path)
    report = HealthReport(str(path), "")
    if not path.exists():
        report.errors.append(f"{path}: no such file or directory")
        return report
    directory = path if path.is_dir() else path.parent
    monitor = HealthMonitor(settings, config)
    extra: list[HealthFinding] = []
    try:
        if (path.is_file() and path.name != TRAINER_STATE) or (directory / METRICS_FILE).is_file():
            report.source = "grpo_runtime"
            metrics = path if path.is_file() else directory / METRICS_FILE
            report.metrics_file = str(metrics)
            extra += read_metrics_jsonl(metrics, monitor, report)
            read_runtime_extras(directory, monitor, report, config is None)
        else:
            state = path if path.is_file() else newest_trainer_state(directory)
            if state is None:
                report.errors.append(
                    f"{path}: not a run directory: it has no {METRICS_FILE} (grpo_runtime) and no {TRAINER_STATE} "
                    f"in it or in a checkpoint-*/ folder (TRL); point at the run's output_dir")
                return report
            report.source = "trl"
            report.metrics_file = str(state)
            read_trainer_state(state, monitor, report)
            read_trl_completions(directory, monitor, report)
    except OSError as exc:
        report.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return report
    report.steps = monitor.history.last_step()
    report.findings = extra + monitor.findings()
    if monitor.history.points and not any(name in monitor.history.metric_names() for name in KNOWN):
        report.findings.append(HealthFinding(Diagnostic(
            A_NO_METRICS, "info", f"none of the metrics the health rules read were logged ({', '.join(KNOWN)})",
            hint="run health judges runs of grpo_runtime and of TRL's GRPOTrainer")))
    return report


def read_metrics_jsonl(metrics: Path, monitor: HealthMonitor, report: HealthReport) -> list[HealthFinding]:
    data = metrics.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:  # no newline at the end: a line still being written, unless it is complete
        try:
            json.loads(lines[-1])
        except ValueError:
            lines.pop()
            report.live = True
            report.notes.append(f"{metrics}: the last line is still being written; it was left out")
    bad: list[HealthFinding] = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            record, why = None, f"not JSON ({str(exc).split(':')[0]})"
        else:
            why = "a JSON value that is not an object"
        if not isinstance(record, dict):
            if len(bad) < 5:
                bad.append(HealthFinding(Diagnostic(
                    A_BAD_LINE, "warning", f"line {number} of {metrics.name} is {why}; it was skipped",
                    line=number, column=1, hint="the other lines were judged; a run that keeps writing such lines "
                    "has a broken writer or a full disk")))
            continue
        monitor.observe_metrics(record, line=number)
    return bad


def read_runtime_extras(directory: Path, monitor: HealthMonitor, report: HealthReport, read_config: bool) -> None:
    if read_config and (directory / "grpo_config.yaml").is_file():
        import yaml

        try:
            values = yaml.safe_load((directory / "grpo_config.yaml").read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError):
            values = None
        if isinstance(values, dict):
            monitor.history.config.update(values)
    info = read_json(directory / "run_info.json")
    if isinstance(info, dict) and isinstance(info.get("resumed_from"), dict):
        resume = info["resumed_from"]
        monitor.observe_event("resume", from_step=resume.get("step"), total_steps=info.get("total_steps"),
                              checkpoint=resume.get("checkpoint"))
    for event in read_jsonl_rows(directory / EVENTS_FILE, report):
        if isinstance(event.get("kind"), str):
            monitor.observe_event(**event)
    for name, sampled in (("completions.jsonl", False), ("completions-sample.jsonl", True)):
        rows = read_jsonl_rows(directory / name, report)
        if rows:
            monitor.observe_completions(rows, sampled=sampled)
            return


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def read_jsonl_rows(path: Path, report: HealthReport) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows, skipped = [], 0
    for raw in path.read_bytes().split(b"\n"):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            skipped += 1
            continue
        if isinstance(row, dict):
            rows.append(row)
    if skipped:
        report.notes.append(f"{path}: {skipped} line(s) that are not JSON were skipped")
    return rows


def newest_trainer_state(directory: Path) -> Path | None:
    """The trainer_state.json with the most steps: the directory's own (written at the end) or its newest
    checkpoint's (a run still training, or one that saved no final state)."""
    candidates = [directory / TRAINER_STATE] + sorted(directory.glob(f"checkpoint-*/{TRAINER_STATE}"))
    best, best_step = None, -1
    for candidate in candidates:
        state = read_json(candidate) if candidate.is_file() else None
        if isinstance(state, dict) and isinstance(state.get("log_history"), list):
            step = state.get("global_step") if isinstance(state.get("global_step"), int) else 0
            if step > best_step:
                best, best_step = candidate, step
    return best


def read_trainer_state(state_path: Path, monitor: HealthMonitor, report: HealthReport) -> None:
    state = read_json(state_path)  # Python's json reads TRL's NaN and Infinity
    if not isinstance(state, dict) or not isinstance(state.get("log_history"), list):
        report.errors.append(f"{state_path}: not a trainer state (no log_history list)")
        return
    for record in state["log_history"]:
        monitor.observe_metrics(record)
    if isinstance(state.get("max_steps"), int):
        monitor.history.config.setdefault("max_steps", state["max_steps"])


def read_trl_completions(directory: Path, monitor: HealthMonitor, report: HealthReport) -> None:
    files = sorted((directory / "completions").glob("completions_*.parquet"))
    if not files:
        return
    try:
        import pyarrow.parquet as pq
    except ImportError:
        report.notes.append(f"{directory / 'completions'}: {len(files)} parquet file(s) not read: pyarrow is not "
                            "installed (pip install pyarrow)")
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
        rewards = {name: value for name, value in record.items()
                   if name not in fixed and (value is None or isinstance(value, (int, float)))}
        finite = [v for v in rewards.values() if isinstance(v, (int, float)) and not math.isnan(v)]
        rewards = {name: None if value is None or math.isnan(value) else value for name, value in rewards.items()}
        rows.append({"step": record.get("step"), "prompt": str(record.get("prompt")),
                     "completion": str(record.get("completion")), "rewards": rewards,
                     "reward": sum(finite) if finite else None})
    return rows

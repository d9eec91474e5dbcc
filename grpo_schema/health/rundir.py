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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpo_schema.engine.codes import declare
from grpo_schema.engine.diagnostics import Diagnostic
from grpo_schema.engine.words import plural
from grpo_schema.health import coverage
from grpo_schema.health.findings import HealthFinding
from grpo_schema.health.monitor import HealthMonitor
from grpo_schema.health.settings import HealthSettings
from grpo_schema.health.trl_files import (  # noqa: F401  (trl_rows: read by the TRL callback too)
    TRAINER_STATE,
    broken_json,
    newest_trainer_state,
    read_trainer_state,
    read_trl_completions,
    trl_rows,
)

A_BAD_LINE = declare(
    "GRPO-A090",
    "warning",
    "metrics line that is not a record",
    "A line of the run's metrics file is not a JSON object (a truncated write, a disk that "
    "filled, two writers at once). The line is skipped; the other lines are judged.",
)
A_NO_METRICS = declare(
    "GRPO-A091",
    "info",
    "not a GRPO run: no GRPO metric logged",
    "The run logged training records, but none of the metrics a GRPO trainer logs (reward, "
    "rewards/NAME, frac_reward_zero_std, completions/*, kl, clip_ratio): an SFT or other "
    "trainer's run, or one that names them differently. Only the optimizer's rules judged it.",
)
A_TOO_SHORT = declare(
    "GRPO-A092",
    "info",
    "too short to judge",
    "The run logged no training step, or one: the rules over a metric need min_steps logged "
    "steps in a row, so the run is neither healthy nor unhealthy yet.",
)

METRICS_FILE = "metrics.jsonl"
EVENTS_FILE = "run_events.jsonl"  # grpo_runtime: what happened to the run beside its metrics (a divergence)


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
    era: str = ""  # "grpo_runtime", or the TRL releases whose metric names the log uses
    not_judged: list[dict] = field(default_factory=list)  # rules that cannot fire: nothing they read was logged
    judged: str = "judged"  # or "nothing logged", "too short to judge", "not a GRPO run"

    @property
    def verdict(self) -> str:
        """healthy, unhealthy, or what kept the run from being judged (never "healthy" for a run too short to
        judge or one that is not GRPO)."""
        if self.errors:
            return "not read"
        if any(f.severity in ("error", "warning") for f in self.findings):
            return "unhealthy"
        return "healthy" if self.judged == "judged" else self.judged

    @property
    def healthy(self) -> bool:
        return self.verdict == "healthy"

    @property
    def diagnostics(self) -> list[Diagnostic]:  # for the github and sarif renderers
        return [f.diagnostic for f in self.findings]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "source": self.source,
            "steps": self.steps,
            "healthy": self.healthy,
            "verdict": self.verdict,
            "era": self.era,
            "live": self.live,
            "metrics_file": self.metrics_file,
            "findings": [f.to_dict() for f in self.findings],
            "errors": list(self.errors),
            "notes": list(self.notes),
            "not_judged": list(self.not_judged),
        }


def check_run_dir(
    path: str | Path, settings: HealthSettings | None = None, config: dict[str, Any] | None = None
) -> HealthReport:
    """Judge the run in `path`: a run directory, or a metrics file or trainer state given by path (read as what
    its content is, whatever its name)."""
    path = Path(path)
    report = HealthReport(str(path), "")
    if not path.exists():
        report.errors.append(f"{path}: no such file or directory")
        return report
    directory = path if path.is_dir() else path.parent
    monitor = HealthMonitor(settings, config)
    extra: list[HealthFinding] = []
    try:
        kind = (
            file_kind(path, report)
            if path.is_file()
            else ("metrics" if (directory / METRICS_FILE).is_file() else "state")
        )
        if kind is None:
            return report
        if kind == "metrics":
            report.source = "grpo_runtime"
            metrics = path if path.is_file() else directory / METRICS_FILE
            report.metrics_file = str(metrics)
            extra += read_metrics_jsonl(metrics, monitor, report)
            read_runtime_extras(directory, monitor, report, config is None)
        else:
            state = path if path.is_file() else newest_trainer_state(directory, report)
            if state is None:
                if not report.errors:
                    report.errors.append(
                        f"{path}: not a run directory: it has no {METRICS_FILE} (grpo_runtime) and no "
                        f"{TRAINER_STATE} in it or in a checkpoint-*/ folder (TRL); point at the run's output_dir"
                    )
                return report
            report.source = "trl"
            report.metrics_file = str(state)
            read_trainer_state(state, monitor, report)
            if report.errors:
                return report
            read_trl_completions(directory, monitor, report)
    except OSError as exc:
        report.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return report
    report.steps = monitor.history.last_step()
    report.findings = extra + monitor.findings()
    judge_coverage(report, monitor)
    return report


def judge_coverage(report: HealthReport, monitor: HealthMonitor) -> None:
    """What the log let the rules judge: too short, not GRPO, the era and the rules it cannot show, artefacts."""
    history = monitor.history
    steps = max(coverage.logged_steps(history), len(history.completions))
    report.era = "grpo_runtime" if report.source == "grpo_runtime" else coverage.era(history)
    if steps <= 1:
        report.judged = "nothing logged" if steps == 0 else "too short to judge"
        what = "no logged training step: nothing to judge" if steps == 0 else "1 logged step: too short to judge"
        report.findings.append(
            HealthFinding(
                Diagnostic(
                    A_TOO_SHORT,
                    "info",
                    f"{what} (the rules over a metric need {monitor.settings.min_steps} logged steps in a row)",
                    hint="judge the run again once it has logged more steps",
                )
            )
        )
    elif not coverage.is_grpo(history):
        report.judged = "not a GRPO run"
        report.findings.append(
            HealthFinding(
                Diagnostic(
                    A_NO_METRICS,
                    "info",
                    f"no GRPO metric on any of {steps} logged steps (reward, rewards/NAME, "
                    "frac_reward_zero_std, completions/..., kl): not a GRPO run; only the optimizer's rules judged it",
                    hint="run health judges runs of grpo_runtime and of TRL's GRPOTrainer",
                )
            )
        )
    if report.judged == "judged":
        report.not_judged = coverage.not_judged(history)
        note = coverage.not_judged_note(report.not_judged, report.era if report.source == "trl" else "")
        if note:
            report.notes.append(note)
    report.notes += coverage.artefact_notes(history, monitor.settings)


def file_kind(path: Path, report: HealthReport) -> str | None:
    """ "state" (a TRL trainer state: one JSON object with log_history) or "metrics" (grpo_runtime's JSON lines),
    by content; None, with the error said, when it is neither (a truncated state names the byte it breaks at)."""
    data = path.read_bytes()
    text = data.lstrip()
    if not text:
        report.errors.append(f"{path}: empty file: neither a trainer state nor a metrics file")
        return None
    try:
        whole = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        first = data.split(b"\n", 1)[0]
        try:
            if isinstance(json.loads(first), dict):
                return "metrics"  # JSON lines: one record a line
        except (ValueError, UnicodeDecodeError):
            pass
        report.errors.append(broken_json(path, exc, len(data)))
        return None
    if isinstance(whole, dict) and isinstance(whole.get("log_history"), list):
        return "state"
    if isinstance(whole, dict) and data.strip().count(b"\n") == 0:
        return "metrics"  # a metrics file of one record
    report.errors.append(f"{path}: JSON, but not a trainer state (no log_history list) nor metrics lines")
    return None


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
                bad.append(
                    HealthFinding(
                        Diagnostic(
                            A_BAD_LINE,
                            "warning",
                            f"line {number} of {metrics.name} is {why}; it was skipped",
                            line=number,
                            column=1,
                            hint="the other lines were judged; a run that keeps writing such lines "
                            "has a broken writer or a full disk",
                        )
                    )
                )
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
        if isinstance(values, dict):  # it holds the values that differ from TRL 1.16's defaults: the rest are those
            from grpo_schema.engine.compiled import compiled

            fields = compiled("config").fields
            monitor.history.config.update(
                {name: fact.get("default") for name, fact in fields.items() if fact.get("default") is not None}
            )
            monitor.history.config.update(values)
    info = read_json(directory / "run_info.json")
    if isinstance(info, dict) and isinstance(info.get("resumed_from"), dict):
        resume = info["resumed_from"]
        monitor.observe_event(
            "resume",
            from_step=resume.get("step"),
            total_steps=info.get("total_steps"),
            checkpoint=resume.get("checkpoint"),
        )
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
        report.notes.append(
            f"{path}: {plural(skipped, 'line')} that {'is' if skipped == 1 else 'are'} not JSON "
            f"{'was' if skipped == 1 else 'were'} skipped"
        )
    return rows

"""Run health while the run trains: every metrics record goes through grpo_schema's health engine on the main
process, and each new finding is printed once, as it appears, in the same words `grpo health` uses.

With GRPO_HEALTH_STOP_ON_FATAL=1 (`grpo train --stop-on-fatal`) a fatal finding (a NaN loss) stops the run
after the current step, on every process together, rather than training on NaN weights.
"""

from __future__ import annotations

import json
import os
import sys

import torch

from grpo_schema.health import HealthMonitor
from grpo_schema.health.rundir import EVENTS_FILE
from grpo_schema.health.text import cleared_line, finding_line

STOP_ENV = "GRPO_HEALTH_STOP_ON_FATAL"


class LiveHealth:
    def __init__(self, config, is_main: bool, stream=None):
        self.monitor = HealthMonitor(config=config.model_dump(mode="json")) if is_main else None
        self.stream = stream or sys.stderr
        self.stop_on_fatal = os.environ.get(STOP_ENV, "") not in ("", "0")
        self.fatal = False

    def write(self, record: dict) -> None:  # a metrics sink beside metrics.jsonl's
        if self.monitor is not None and self.monitor.observe_metrics(record):
            self.report()

    def close(self) -> None:
        pass

    def completions(self, rows: list[dict], sampled: bool) -> None:
        """The completion rows written this generation (completions.jsonl or its sample), as `grpo health` reads
        them back: identical completions and the reward of cut ones are judged live too."""
        if self.monitor is not None:
            self.monitor.observe_completions(json.loads(json.dumps(rows)), sampled=sampled)

    def resumed(self, checkpoint, from_step: int, total_steps: int, trained_steps: int | None = None) -> None:
        if self.monitor is not None:
            self.monitor.observe_event(
                "resume",
                checkpoint=str(checkpoint),
                from_step=from_step,
                total_steps=total_steps,
                trained_steps=trained_steps,
            )
            if trained_steps is not None:
                self.report()

    def diverged(self, step: int, error: str, output_dir) -> None:
        """Generation found NaN or infinite probabilities: recorded in run_events.jsonl for `grpo health`."""
        if self.monitor is None:
            return
        event = {"kind": "diverged", "step": step, "error": error}
        with (output_dir / EVENTS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(event) + "\n")
        self.monitor.observe_event(**event)
        self.report()

    def report(self) -> None:
        fresh, cleared = self.monitor.changes()
        for finding in cleared:  # it held on the steps so far, no longer: said, so the last word is the batch's
            print(cleared_line(finding, self.monitor.history.last_step()), file=self.stream, flush=True)
        for finding in fresh:
            print(finding_line(finding), file=self.stream, flush=True)
            self.fatal = self.fatal or finding.fatal

    def should_stop(self, accelerator) -> bool:
        """Whether a fatal finding stops the run now (every process learns it from the main one)."""
        if not self.stop_on_fatal:
            return False
        flag = torch.tensor(float(self.fatal), device=accelerator.device)
        return bool(accelerator.reduce(flag, reduction="sum").item() > 0)

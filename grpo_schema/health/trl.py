"""The run-health engine inside TRL's own GRPOTrainer, as a transformers callback.

    from grpo_schema.health.trl import RunHealthCallback

    health = RunHealthCallback(stop_on_fatal=True)
    trainer = GRPOTrainer(model=..., reward_funcs=health.watch([accuracy, format_reward]), args=args,
                          train_dataset=..., callbacks=[health])

Each logging step's metrics go through the same rules as `grpo health`; every new finding is printed once (and
logged through the `grpo_schema.health` logger), and with `stop_on_fatal` a fatal one (a NaN loss or gradient)
stops training at that step. `watch(reward_funcs)` wraps each reward function, keeping its name, to count its
None and NaN scores and time its calls (TRL logs neither); a call running past `reward_seconds` is reported while
it runs. With log_completions the completion tables TRL writes are read too. This module imports transformers;
nothing else in grpo_schema does, so TRL stays optional.
"""

from __future__ import annotations

import functools
import inspect
import logging
import math
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterable

from transformers import TrainerCallback

from grpo_schema.health.monitor import HealthMonitor
from grpo_schema.health.settings import HealthSettings
from grpo_schema.health.text import cleared_line, finding_line

logger = logging.getLogger("grpo_schema.health")


class RunHealthCallback(TrainerCallback):
    def __init__(self, settings: HealthSettings | None = None, stop_on_fatal: bool = False, stream=None):
        self.settings = settings or HealthSettings()
        self.stop_on_fatal = stop_on_fatal
        self.stream = stream if stream is not None else sys.stderr
        self.monitor = HealthMonitor(self.settings)
        self.reported: list = []  # every finding printed, in order
        self.cleared: list = []  # findings printed that later stopped holding, in order
        self.stopped_at: int | None = None
        self._step = 0
        self._start_step: int | None = None
        self._read_tables: set[str] = set()
        self._output_dir: Path | None = None
        self._is_main = True

    # --- reward functions ----------------------------------------------------------------------------------------
    def watch(self, reward_funcs: Any) -> Any:
        """The reward functions (one or a list), each wrapped to be counted and timed under its own name; a reward
        model (a name or a model object) is returned as it is."""
        if isinstance(reward_funcs, (list, tuple)):
            return [self._wrap(func) for func in reward_funcs]
        return self._wrap(reward_funcs)

    def _wrap(self, func: Any) -> Any:
        if isinstance(func, str) or not callable(func) or hasattr(func, "config"):  # a reward model
            return func
        name = getattr(func, "__name__", None) or type(func).__name__
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def watched_async(*args, **kwargs):
                started, timer = self._start_timer(name)
                try:
                    values = await func(*args, **kwargs)
                finally:
                    timer.cancel()
                self._count(name, time.perf_counter() - started, values)
                return values

            return watched_async

        @functools.wraps(func)
        def watched(*args, **kwargs):
            started, timer = self._start_timer(name)
            try:
                values = func(*args, **kwargs)
            finally:
                timer.cancel()
            self._count(name, time.perf_counter() - started, values)
            return values

        watched.__name__ = name  # TRL names the reward's metrics after __name__
        return watched

    def _start_timer(self, name: str) -> tuple[float, threading.Timer]:
        limit = self.settings.reward_seconds
        timer = threading.Timer(limit, self._still_running, args=(name, limit))
        timer.daemon = True
        timer.start()
        return time.perf_counter(), timer

    def _still_running(self, name: str, limit: float) -> None:
        self._say(
            f"grpo health: GRPO-A004 warning at step {self._step + 1}: reward function {name} has been "
            f"running for {limit:g} s and has not returned; make it async, batch its remote calls, or give "
            "it a timeout that returns None"
        )

    def _count(self, name: str, seconds: float, values: Any) -> None:
        if isinstance(values, Iterable):
            values = list(values)
        else:
            values = []
        self.monitor.observe_reward_call(name, self._step + 1, seconds, [_plain(v) for v in values])

    # --- trainer events ------------------------------------------------------------------------------------------
    def on_train_begin(self, args, state, control, **kwargs):
        self._is_main = bool(getattr(state, "is_world_process_zero", True))
        self._output_dir = Path(args.output_dir) if getattr(args, "output_dir", None) else None
        self.monitor.history.config.update(
            {k: v for k, v in _args_dict(args).items() if isinstance(v, (int, float, str, bool)) or v is None}
        )
        self._step = self._start_step = int(state.global_step)
        if state.global_step > 0:
            self.monitor.observe_event(
                "resume",
                from_step=int(state.global_step),
                total_steps=int(state.max_steps),
                checkpoint=str(getattr(args, "resume_from_checkpoint", "") or ""),
                ignore_data_skip=bool(getattr(args, "ignore_data_skip", False)),
            )
        self._report(control)
        return control

    def on_step_end(self, args, state, control, **kwargs):
        self._step = int(state.global_step)
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        self._step = int(state.global_step)
        if logs:
            self.monitor.observe_metrics(dict(logs), step=int(state.global_step))
        self._read_completion_tables()
        self._report(control)
        return control

    def on_train_end(self, args, state, control, **kwargs):
        self._read_completion_tables()
        if self._start_step and self._start_step > 0:
            self.monitor.observe_event(
                "resume",
                from_step=self._start_step,
                total_steps=int(state.max_steps),
                trained_steps=int(state.global_step) - self._start_step,
            )
        self._report(control)
        return control

    # --- reporting -----------------------------------------------------------------------------------------------
    def findings(self) -> list:
        """The findings on the run so far: on a finished run, those `grpo health` gives on its output_dir."""
        return self.monitor.findings()

    def report(self):
        """The run so far as `grpo health` reports it (verdict, era, findings, notes), from what the callback saw."""
        from grpo_schema.health.rundir import HealthReport, judge_coverage

        report = HealthReport(
            str(self._output_dir or ""), "trl", steps=self.monitor.history.last_step(), findings=self.monitor.findings()
        )
        judge_coverage(report, self.monitor)
        return report

    def _read_completion_tables(self) -> None:
        """TRL writes a log's completion table just after the log's callbacks: read each new one on the next."""
        if self._output_dir is None or not (self._output_dir / "completions").is_dir():
            return
        from grpo_schema.health.trl_files import trl_rows

        try:
            import pyarrow.parquet as pq
        except ImportError:
            return
        for path in sorted((self._output_dir / "completions").glob("completions_*.parquet")):
            if str(path) in self._read_tables:
                continue
            try:
                table = pq.read_table(path).to_pylist()
            except Exception:  # still being written: read it next time
                continue
            self._read_tables.add(str(path))
            self.monitor.history.none_includes_nan = True
            self.monitor.observe_completions(trl_rows(table, {"step", "prompt", "completion", "advantage", "image"}))

    def _report(self, control) -> None:
        fresh, cleared = self.monitor.changes()
        for finding in cleared:
            self.cleared.append(finding)
            self._say(cleared_line(finding, self._step))
        for finding in fresh:
            self.reported.append(finding)
            self._say(finding_line(finding))
            if finding.fatal and self.stop_on_fatal:
                control.should_training_stop = True
                self.stopped_at = self._step
                self._say(f"grpo health: stopping the run at step {self._step} (stop_on_fatal)")

    def _say(self, line: str) -> None:
        if not self._is_main:
            return
        logger.warning(line)
        if self.stream is not None:
            print(line, file=self.stream, flush=True)


def _plain(value: Any) -> Any:
    """A reward value as Python data (a tensor or numpy scalar becomes a float; None stays None)."""
    if value is None or isinstance(value, (int, float)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _args_dict(args) -> dict[str, Any]:
    try:
        return dict(args.to_dict())
    except Exception:  # an args object of another shape: its attributes
        return {k: v for k, v in vars(args).items() if not k.startswith("_")}


__all__ = ["RunHealthCallback"]

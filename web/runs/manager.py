"""The run queue and its supervisor: start queued runs, watch running ones, cancel, resume, recover.

One RunManager per service process owns a runs directory (an exclusive lock file makes sure of that). Its state
lives in the Store; in memory it keeps only the Popen objects of the runs it started itself. A supervisor thread
looks at every running run each `runs_poll_s`: it copies new metrics, notices the end of the process and
escalates a cancel to SIGKILL after the grace period, then starts queued runs while slots are free.
"""

from __future__ import annotations

import fcntl
import json
import logging
import secrets
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from grpo_web.runs import launcher, outputs, procs, rayjobs, resumable, slurm
from grpo_web.runs.settings import RunsSettings
from grpo_web.runs.store import ACTIVE, Run, Store

log = logging.getLogger("grpo_web.runs")


class RunConflict(Exception):
    """The request does not fit the run's state (HTTP 409)."""


class QueueFull(Exception):
    """runs_max_queued runs are already waiting (HTTP 429)."""


class OutputBusy(Exception):
    """Another queued or running run writes the same output_dir."""

    def __init__(self, run_id: str, output_dir: str):
        super().__init__(run_id)
        self.run_id, self.output_dir = run_id, output_dir


class OutputOwned(Exception):
    """output_dir belongs to a finished run: a new run would overwrite its checkpoints and model."""

    def __init__(self, owner: Run, output_dir: str):
        super().__init__(owner.id)
        self.owner, self.output_dir = owner, output_dir


EXISTING_OUTPUT = ("resume", "overwrite")  # what a request may ask for an output_dir another run owns


class RunManager:
    def __init__(self, settings: RunsSettings):
        if settings.runs_backend == "ray":  # refused at start, not at the first launch
            missing = None if settings.runs_ray_address else \
                "the ray backend needs the cluster's address (GRPO_WEB_RUNS_RAY_ADDRESS=http://HEAD:8265)"
            missing = missing or rayjobs.available()
            if missing:
                raise RuntimeError(missing)
        self.settings = settings
        self.runs_dir = settings.runs_dir.expanduser().resolve()
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self.base_dir = Path.cwd().resolve()  # relative model and dataset paths are read from here (paths.py)
        self._owner = _lock_directory(self.runs_dir)
        self.store = Store(settings.runs_db_path)
        self._lock = threading.RLock()
        self._popens: dict[str, subprocess.Popen] = {}  # runs this process started (others: by pid)
        self._killed: set[str] = set()
        self._asked: dict[str, float] = {}  # when Slurm or Ray was last asked about each job
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="runs-supervisor", daemon=True)

    # --- lifecycle -------------------------------------------------------------------------------------------------
    def open(self) -> "RunManager":
        with self._lock:
            self._recover()
            self._pump()
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop watching. Runs go on in their own sessions; the next service start re-attaches to them."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self.store.close()
        self._owner.close()

    def _supervise(self) -> None:
        while not self._stop.wait(self.settings.runs_poll_s):
            try:
                self.tick()
            except Exception:  # one bad look must not end the supervision of every run
                log.exception("runs supervisor: tick failed")

    def tick(self) -> None:
        with self._lock:
            for run in self.store.list(("running",)) + self._submitted():
                self._watch(run)
            self._pump()

    # --- requests --------------------------------------------------------------------------------------------------
    def submit(self, config_text: str, config_format: str, world_size: int, output_dir: Path | None,
               resume_checkpoint: Path | None, warnings: str = "[]", resuming: bool = False,
               parent: Run | None = None, existing: str | None = None, overrides: dict | None = None) -> Run:
        """Queue a run. A run owns its output_dir: it is RUNS_DIR/<id>/output unless the config names one, and
        a named one that another run wrote (and that was not overwritten since) is refused with OutputOwned,
        unless this run resumes that run (`resuming`, `parent`, or existing="resume": from its last complete
        checkpoint) or replaces its outputs (existing="overwrite": the old output_dir is deleted). A run that
        resumes appends to its output_dir's metrics.jsonl: only the lines it adds are its own, after its
        parent's records up to the checkpoint (when the parent is known)."""
        with self._lock:
            if len(self.store.queued()) >= self.settings.runs_max_queued:
                raise QueueFull(f"{self.settings.runs_max_queued} runs are already queued; try again later")
            run_id = secrets.token_hex(6)
            run_dir = self.runs_dir / run_id
            output = str(output_dir or run_dir / "output")
            self._refuse_busy(output)
            owners = self.store.owners(output)
            replaced: list[Run] = []
            if owners and parent is None:
                if existing == "resume" or (resuming and existing is None):
                    parent = owners[0]
                    if existing == "resume":
                        judged = resumable.judge(parent, resumable.logged_step(self.store, parent), config_text)
                        if not judged.possible:
                            raise RunConflict(f"{judged.reason}; or ask for existing_output=overwrite to start "
                                              "again there")
                        resume_checkpoint = resumable.checkpoint_path(parent, judged)
                elif existing == "overwrite":
                    replaced = owners
                else:
                    raise OutputOwned(owners[0], output)
            launcher.write_config(run_dir, config_text, config_format)
            for old in replaced:  # the request asked for it: the old outputs go, the old run says so
                self.store.update(old.id, replaced_by=run_id)
                _note(old, f"output_dir {output} overwritten by run {run_id} (existing_output=overwrite): its "
                           f"checkpoints and model deleted, its metrics, completions and log kept in "
                           f"{Path(old.run_dir) / outputs.KEPT}")
            if replaced:
                outputs.keep_records(output, replaced)
                shutil.rmtree(output, ignore_errors=True)
            run = self.store.insert(id=run_id, state="queued", config_text=config_text, config_format=config_format,
                                    backend=self.settings.runs_backend, world_size=world_size, output_dir=output,
                                    run_dir=str(run_dir),
                                    resume_checkpoint=str(resume_checkpoint) if resume_checkpoint else None,
                                    resumed_from=parent.id if parent else None, warnings=warnings,
                                    overrides=json.dumps(overrides or {}))
            if resuming or parent:
                outputs.skip_existing_metrics(self.store, run)
            if parent and resume_checkpoint:
                self.store.copy_metrics(parent.id, run_id, outputs.checkpoint_step(resume_checkpoint))
            self._pump()
            return self.store.get(run.id)

    def cancel(self, run_id: str) -> Run | None:
        with self._lock:
            run = self.store.get(run_id)
            if run is None:
                return None
            if run.finished:
                raise RunConflict(f"run {run_id} has already {run.state}")
            if run.job_id is not None:
                self._cancel_job(run)
            elif run.state == "queued":
                self._finish(run, "cancelled", None, "cancelled before it started")
            elif run.cancel_requested_at is None:
                self.store.update(run_id, cancel_requested_at=time.time())
                first = signal.SIGKILL if self.settings.runs_cancel_grace_s == 0 else signal.SIGTERM
                procs.signal_run(run.pid, run.pid_start, first)
                _note(run, f"cancel requested: {first.name} sent to the run's processes")
            return self.store.get(run_id)

    def resume(self, run_id: str, max_steps: int | None = None) -> Run | None:
        """A new run of the same config in the same output_dir, from the last complete checkpoint; `max_steps`:
        with max_steps raised to that (a run that trained all its steps goes on)."""
        with self._lock:
            parent = self.store.get(run_id)
            if parent is None:
                return None
            try:
                text = parent.config_text if max_steps is None else \
                    resumable.with_max_steps(parent.config_text, parent.config_format, max_steps)
            except ValueError as error:  # the YAML editor's EditError, or JSON that no longer reads
                raise RunConflict(f"max_steps could not be set in run {run_id}'s config ({error}); open it in the "
                                  "form, raise max_steps there and launch it into the same output_dir") from None
            judged = resumable.judge(parent, resumable.logged_step(self.store, parent),
                                     None if max_steps is None else text)
            if not judged.possible:
                raise RunConflict(judged.reason)
            checkpoint = resumable.checkpoint_path(parent, judged)
            return self.submit(text, parent.config_format, parent.world_size, Path(parent.output_dir),
                               checkpoint, parent.warnings, parent=parent, overrides=json.loads(parent.overrides))

    # --- internals -------------------------------------------------------------------------------------------------

    def _refuse_busy(self, output_dir: str) -> None:
        for other in self.store.list(ACTIVE):
            if other.output_dir == output_dir:
                raise OutputBusy(other.id, output_dir)

    def _submitted(self) -> list[Run]:
        """Queued runs that are already jobs of a scheduler (pending in Slurm's queue, or Ray's)."""
        return [run for run in self.store.queued() if run.job_id is not None]

    def _pump(self) -> None:
        """Start the oldest queued runs while fewer than runs_max_concurrent are running. With the Slurm backend
        every queued run is submitted at once: Slurm's queue decides when it starts. Ray jobs are submitted while
        fewer than runs_max_concurrent are: Ray has no queue, a job would wait for its placement group."""
        if self.settings.runs_backend == "slurm":
            for run in self.store.queued():
                if run.slurm_job_id is None:
                    self._submit_job(run)
            return
        waiting = [run for run in self.store.queued() if run.job_id is None]
        free = self.settings.runs_max_concurrent - len(self.store.list(("running",))) - len(self._submitted())
        for run in waiting[:max(free, 0)]:
            self._submit_ray(run) if self.settings.runs_backend == "ray" else self._start(run)

    def _start(self, run: Run) -> None:
        try:
            started = launcher.start(Path(run.run_dir), run.config_format, run.world_size, run.output_dir,
                                     run.resume_checkpoint, tuple(self.settings.runs_env_allowlist),
                                     json.loads(run.overrides or "{}"))
        except OSError as error:
            self._finish(run, "failed", None, f"the run could not be started: {error}")
            return
        self._popens[run.id] = started.popen
        self.store.update(run.id, state="running", started_at=time.time(), pid=started.pid,
                          pid_start=started.start_time)
        log.info("run %s started (pid %s)", run.id, started.pid)

    def _watch(self, run: Run) -> None:
        if run.backend == "slurm":
            self._watch_job(run)
            return
        if run.backend == "ray":
            self._watch_ray(run)
            return
        outputs.ingest_metrics(self.store, run)
        ended, code = self._exit_status(run)
        if not ended:
            self._escalate_cancel(run)
            return
        outputs.ingest_metrics(self.store, self.store.get(run.id))  # the lines written just before the end
        self._finish_exited(self.store.get(run.id), code)

    def _exit_status(self, run: Run) -> tuple[bool, int | None]:
        popen = self._popens.get(run.id)
        if popen is not None:
            code = popen.poll()
            return code is not None, code
        if procs.alive(run.pid, run.pid_start):
            return False, None
        return True, launcher.recorded_exit(Path(run.run_dir))

    def _escalate_cancel(self, run: Run) -> None:
        if run.cancel_requested_at is None or run.id in self._killed:
            return
        if time.time() - run.cancel_requested_at >= self.settings.runs_cancel_grace_s:
            if procs.signal_run(run.pid, run.pid_start, signal.SIGKILL):
                _note(run, f"still running {self.settings.runs_cancel_grace_s:g} s after the cancel: SIGKILL sent")
            self._killed.add(run.id)

    def _finish_exited(self, run: Run, code: int | None) -> None:
        if run.cancel_requested_at is not None:
            self._finish(run, "cancelled", code, "cancelled on request")
        elif code == 0:
            self._finish(run, "succeeded", 0, None)
        elif code is None:
            self._finish(run, "failed", None, "the run's process ended while the service was not running and "
                                              "left no exit status")
        else:
            self._finish(run, "failed", code, f"{describe_exit(code)}; the log says why")

    def _finish(self, run: Run, state: str, code: int | None, reason: str | None) -> None:
        error = outputs.failure_cause(run) if state == "failed" else None  # before the service's own note
        _note(run, f"run {state}" + (f": {reason}" if reason else ""))  # before the state: a log follower
        self.store.update(run.id, state=state, exit_code=code, reason=reason, error=error,  # reads it
                          finished_at=time.time())
        self._popens.pop(run.id, None)
        self._killed.discard(run.id)
        log.info("run %s %s%s", run.id, state, f" ({reason})" if reason else "")

    # --- Slurm jobs (grpo_web.runs.slurm) ---------------------------------------------------------------------------
    def _submit_job(self, run: Run) -> None:
        try:
            job_id, spec = slurm.submit(run, self.settings)
        except (slurm.SlurmError, ValueError, OSError) as error:
            self._finish(run, "failed", None, f"the run could not be submitted to Slurm: {error}")
            return
        self.store.update(run.id, slurm_job_id=job_id, slurm_state="PENDING")
        _note(run, f"submitted to Slurm as job {job_id}: {spec.layout.describe()} (script {spec.script_path})")
        log.info("run %s submitted to Slurm as job %s", run.id, job_id)

    def _cancel_job(self, run: Run) -> None:
        """scancel, or Ray's stop_job: the scheduler signals every process (Slurm kills what is left after its
        KillWait, the Ray job's driver ends every machine). The end is the scheduler's."""
        self.store.update(run.id, cancel_requested_at=run.cancel_requested_at or time.time())
        backend, failed = (rayjobs, rayjobs.RayUnavailable) if run.backend == "ray" else (slurm, slurm.SlurmError)
        try:
            backend.cancel(run)
        except failed as error:  # e.g. the job ended meanwhile: the next look settles the run
            _note(run, f"cancel requested: {error}")
            return
        _note(run, f"cancel requested: scancel {run.slurm_job_id}" if run.backend == "slurm" else
              f"cancel requested: Ray asked to stop job {run.ray_job_id}")
        self._asked.pop(run.id, None)  # look again at once

    def _watch_job(self, run: Run) -> None:
        outputs.ingest_metrics(self.store, run)
        now = time.monotonic()
        if now - self._asked.get(run.id, -1e9) < self.settings.runs_slurm_poll_s:
            return
        self._asked[run.id] = now
        try:
            found = slurm.status(run)
        except slurm.SlurmError as error:  # the controller did not answer: ask again later, decide nothing
            log.warning("run %s: %s", run.id, error)
            return
        if found is None:
            self._finish(run, "failed", None, slurm.forgotten(run))
            return
        if (found.state, found.reason) != (run.slurm_state, run.slurm_reason):
            self.store.update(run.id, slurm_state=found.state, slurm_reason=found.reason)
            _note(run, found.describe())
        if not found.finished:
            if not found.pending and run.state == "queued":
                self.store.update(run.id, state="running", started_at=time.time())
            return
        outputs.ingest_metrics(self.store, self.store.get(run.id))
        self._asked.pop(run.id, None)
        state, code, reason = slurm.outcome(found, run.cancel_requested_at is not None)
        self._finish(self.store.get(run.id), state, code, reason)

    # --- Ray jobs (grpo_web.runs.rayjobs) -----------------------------------------------------------------------------
    def _submit_ray(self, run: Run) -> None:
        try:
            job_id, placed = rayjobs.submit(run, self.settings)
        except (rayjobs.RayUnavailable, ValueError, OSError) as error:
            self._finish(run, "failed", None, f"the run could not be submitted to Ray: {error}")
            return
        self.store.update(run.id, ray_job_id=job_id, ray_state="PENDING")
        _note(run, f"submitted to the Ray cluster at {self.settings.runs_ray_address} as job {job_id}: {placed}")
        log.info("run %s submitted to Ray as job %s", run.id, job_id)

    def _watch_ray(self, run: Run) -> None:
        outputs.ingest_metrics(self.store, run)
        if run.job_id is None:
            return
        now = time.monotonic()
        if now - self._asked.get(run.id, -1e9) < self.settings.runs_ray_poll_s:
            return
        self._asked[run.id] = now
        try:
            rayjobs.copy_output(run)
            found = rayjobs.status(run)
        except rayjobs.RayUnavailable as error:  # the cluster did not answer: ask again later, decide nothing
            log.warning("run %s: %s", run.id, error)
            return
        if found is None:
            self._finish(run, "failed", None, rayjobs.forgotten(run))
            return
        if (found.state, found.message) != (run.ray_state, run.ray_reason):
            self.store.update(run.id, ray_state=found.state, ray_reason=found.message)
            _note(run, found.describe())
        if not found.finished:
            if found.state == "RUNNING" and run.state == "queued":
                self.store.update(run.id, state="running", started_at=time.time())
            return
        try:
            rayjobs.copy_output(run)  # the last lines, written as the job ended
        except rayjobs.RayUnavailable:
            pass
        outputs.ingest_metrics(self.store, self.store.get(run.id))
        self._asked.pop(run.id, None)
        state, code, reason = rayjobs.outcome(found, run.cancel_requested_at is not None)
        self._finish(self.store.get(run.id), state, code, reason)

    def _recover(self) -> None:
        """Runs marked running by a service that is gone: re-attach to the living, settle the rest. Slurm and
        Ray jobs are followed again by their job id."""
        for run in self._submitted() + self.store.list(("running",), backend="slurm") \
                + self.store.list(("running",), backend="ray"):
            _note(run, f"service restarted: following {'Slurm' if run.backend == 'slurm' else 'Ray'} job "
                       f"{run.job_id} again")
        for run in self.store.list(("running",), backend="local"):
            if run.pid is None:  # the service died between starting the process and recording it
                pid, started = launcher.recorded_process(Path(run.run_dir))
                self.store.update(run.id, pid=pid, pid_start=started)
                run = self.store.get(run.id)
            if procs.alive(run.pid, run.pid_start):
                _note(run, f"service restarted: re-attached to the run's process (pid {run.pid})")
                log.info("run %s re-attached (pid %s)", run.id, run.pid)
                continue
            outputs.ingest_metrics(self.store, run)
            self._finish_exited(self.store.get(run.id), launcher.recorded_exit(Path(run.run_dir)))


def describe_exit(code: int) -> str:
    """The wrapper's status: the command's exit code, 128+N when it was killed by signal N, or -N when the
    wrapper itself was."""
    number = -code if code < 0 else code - 128 if code > 128 else None
    if number:
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            pass
    return f"exited with code {code}"


def _note(run: Run, text: str) -> None:
    """A line from the service in the run's log, so the log tells the whole story (appends interleave safely)."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    try:
        with open(Path(run.run_dir) / launcher.LOG_FILE, "ab+") as handle:
            prefix = "" if _ends_line(handle) else "\n"  # after a progress bar's carriage returns
            handle.write(f"{prefix}[grpo-config {stamp}] {text}\n".encode())
    except OSError:
        pass


def _ends_line(handle) -> bool:
    if handle.seek(0, 2) == 0:
        return True
    handle.seek(-1, 2)
    return handle.read(1) == b"\n"


def _lock_directory(runs_dir: Path):
    """Hold RUNS_DIR/.service.lock for the life of the service: two services would both start queued runs."""
    handle = open(runs_dir / ".service.lock", "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise RuntimeError(f"another grpo-config service manages runs in {runs_dir}")
    return handle

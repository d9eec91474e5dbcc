"""The run queue and its supervisor: start queued runs, watch running ones, cancel, resume, recover.

One RunManager per service process owns a runs directory (an exclusive lock file makes sure of that). Its state
lives in the Store. Where runs train is the business of one run backend (grpo_web.runs.backend: this machine,
Slurm, Ray, or any other registered in grpo_web.runs.backends), which the manager reaches only through the
backend's interface. A supervisor thread looks at every running run each `runs_poll_s`: it copies new metrics,
asks the backend about the job (as often as the backend wants), settles the runs whose job ended, then submits
queued runs while slots are free.
"""

from __future__ import annotations

import fcntl
import json
import logging
import secrets
import shutil
import threading
import time
from pathlib import Path

from grpo_web.runs import backends, documents, launcher, outputs, resumable
from grpo_web.runs.backend import BackendUnavailable, JobState, SubmitRefused
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
        try:
            self.backend = backends.backend(settings.runs_backend, settings)
        except ValueError as error:
            raise RuntimeError(str(error)) from None
        missing = self.backend.available()  # refused at start, not at the first launch
        if missing:
            raise RuntimeError(missing)
        self._others: dict[str, object] = {}  # backends of runs a service with another backend left running
        self.settings = settings
        self.runs_dir = settings.runs_dir.expanduser().resolve()
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self.base_dir = Path.cwd().resolve()  # relative model and dataset paths are read from here (paths.py)
        self._owner = _lock_directory(self.runs_dir)
        self.store = Store(settings.runs_db_path)
        self._lock = threading.RLock()
        self._asked: dict[str, float] = {}  # when the backend was last asked about each job
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="runs-supervisor", daemon=True)

    # --- lifecycle -------------------------------------------------------------------------------------------------
    def open(self) -> "RunManager":
        with self._lock:
            documents.find_completions_ends(self.store)
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
    def submit(
        self,
        config_text: str,
        config_format: str,
        world_size: int,
        output_dir: Path | None,
        resume_checkpoint: Path | None,
        warnings: str = "[]",
        resuming: bool = False,
        parent: Run | None = None,
        existing: str | None = None,
        overrides: dict | None = None,
    ) -> Run:
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
                        judged = resumable.verdict(self.store, parent, config_text)
                        if not judged.possible:
                            raise RunConflict(
                                f"{judged.reason}; or ask for existing_output=overwrite to start again there"
                            )
                        resume_checkpoint = resumable.checkpoint_path(parent, judged)
                elif existing == "overwrite":
                    replaced = owners
                else:
                    raise OutputOwned(owners[0], output)
            launcher.write_config(run_dir, config_text, config_format)
            for old in replaced:  # the request asked for it: the old outputs go, the old run says so
                self.store.update(old.id, replaced_by=run_id)
                _note(
                    old,
                    f"output_dir {output} overwritten by run {run_id} (existing_output=overwrite): its "
                    f"checkpoints and model deleted, its metrics, completions and log kept in "
                    f"{Path(old.run_dir) / outputs.KEPT}",
                )
            if replaced:
                outputs.keep_records(output, replaced)
                shutil.rmtree(output, ignore_errors=True)
            run = self.store.insert(
                id=run_id,
                state="queued",
                config_text=config_text,
                config_format=config_format,
                backend=self.settings.runs_backend,
                world_size=world_size,
                output_dir=output,
                run_dir=str(run_dir),
                resume_checkpoint=str(resume_checkpoint) if resume_checkpoint else None,
                resumed_from=parent.id if parent else None,
                warnings=warnings,
                overrides=json.dumps(overrides or {}),
            )
            if parent:  # the line goes on in this run: what is written there from now on is not the parent's
                self.store.update(parent.id, resumed_by=run_id, completions_end=outputs.completions_size(output))
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
            if run.state == "queued" and run.job_id is None:
                self._finish(run, "cancelled", None, "cancelled before it started")
            elif run.cancel_requested_at is None:  # the end is the job's: the next look settles the run
                self.store.update(run_id, cancel_requested_at=time.time())
                try:
                    _note(run, self._backend_of(run).cancel(self.store.get(run_id)))
                except BackendUnavailable as error:  # e.g. the job ended meanwhile: the next look settles it
                    _note(run, f"cancel requested: {error}")
                self._asked.pop(run.id, None)  # look again at once
            return self.store.get(run_id)

    def resume(self, run_id: str, max_steps: int | None = None) -> Run | None:
        """A new run of the same config in the same output_dir, from the last complete checkpoint; `max_steps`:
        with max_steps raised to that (a run that trained all its steps goes on)."""
        with self._lock:
            parent = self.store.get(run_id)
            if parent is None:
                return None
            try:
                text = (
                    parent.config_text
                    if max_steps is None
                    else resumable.with_max_steps(parent.config_text, parent.config_format, max_steps)
                )
            except ValueError as error:  # the YAML editor's EditError, or JSON that no longer reads
                raise RunConflict(
                    f"max_steps could not be set in run {run_id}'s config ({error}); open it in the "
                    "form, raise max_steps there and launch it into the same output_dir"
                ) from None
            judged = resumable.verdict(self.store, parent, None if max_steps is None else text)
            if not judged.possible:
                raise RunConflict(judged.reason)
            checkpoint = resumable.checkpoint_path(parent, judged)
            return self.submit(
                text,
                parent.config_format,
                parent.world_size,
                Path(parent.output_dir),
                checkpoint,
                parent.warnings,
                parent=parent,
                overrides=json.loads(parent.overrides),
            )

    # --- internals -------------------------------------------------------------------------------------------------

    def _refuse_busy(self, output_dir: str) -> None:
        for other in self.store.list(ACTIVE):
            if other.output_dir == output_dir:
                raise OutputBusy(other.id, output_dir)

    def _submitted(self) -> list[Run]:
        """Queued runs that are already jobs of a scheduler (pending in Slurm's queue, or Ray's)."""
        return [run for run in self.store.queued() if run.job_id is not None]

    def _pump(self) -> None:
        """Submit the oldest queued runs: all of them to a backend with a queue of its own (Slurm's decides when
        each starts), else while fewer than runs_max_concurrent are running or submitted (Ray has no queue)."""
        waiting = [run for run in self.store.queued() if run.job_id is None]
        if not self.backend.queues:
            free = self.settings.runs_max_concurrent - len(self.store.list(("running",))) - len(self._submitted())
            waiting = waiting[: max(free, 0)]
        for run in waiting:
            self._submit_job(run)

    def _backend_of(self, run: Run):
        """The backend a run was submitted to (a service restarted with another backend still follows it)."""
        if run.backend == self.backend.name:
            return self.backend
        if run.backend not in self._others:
            self._others[run.backend] = backends.backend(run.backend, self.settings)
        return self._others[run.backend]

    def _submit_job(self, run: Run) -> None:
        backend = self.backend
        try:
            submitted = backend.resume(run) if run.resume_checkpoint else backend.submit(run)
        except (SubmitRefused, ValueError, OSError) as error:
            self._finish(run, "failed", None, str(error))
            return
        values = dict(job_id=submitted.job_id, job_state=submitted.state, job_reason=None)
        if submitted.process is not None:
            values.update(pid=submitted.process[0], pid_start=submitted.process[1])
        if submitted.started:
            values.update(state="running", started_at=time.time())
        self.store.update(run.id, **values)
        _note(run, submitted.note)
        log.info("run %s: %s", run.id, submitted.note)

    def _watch(self, run: Run) -> None:
        outputs.ingest_metrics(self.store, run)
        backend = self._backend_of(run)
        now = time.monotonic()
        if now - self._asked.get(run.id, -1e9) < backend.poll_s():
            return
        self._asked[run.id] = now
        try:
            backend.logs(run)
            found = backend.status(run)
        except BackendUnavailable as error:  # no answer: ask again later, decide nothing
            log.warning("run %s: %s", run.id, error)
            return
        if found is None:
            self._finish(run, "failed", None, backend.forgotten(run))
            return
        self._record(run, found)
        if not found.finished:
            if found.started and run.state == "queued":
                self.store.update(run.id, state="running", started_at=time.time())
            return
        try:
            backend.logs(run)  # the last lines, written as the job ended
        except BackendUnavailable:
            pass
        outputs.ingest_metrics(self.store, self.store.get(run.id))  # the lines written just before the end
        self._asked.pop(run.id, None)
        run = self.store.get(run.id)
        state, code, reason = backend.outcome(run, found)
        self._finish(run, state, code, reason)

    def _record(self, run: Run, found: JobState) -> None:
        """The job's state and reason as the backend gives them, and a line in the log when they change."""
        if (found.state, found.reason) != (run.job_state, run.job_reason):
            self.store.update(run.id, job_state=found.state, job_reason=found.reason)
            if found.note:
                _note(run, found.note)

    def _finish(self, run: Run, state: str, code: int | None, reason: str | None) -> None:
        error = outputs.failure_cause(run) if state == "failed" else None  # before the service's own note
        _note(run, f"run {state}" + (f": {reason}" if reason else ""))  # before the state: a log follower
        self.store.update(
            run.id,
            state=state,
            exit_code=code,
            reason=reason,
            error=error,  # reads it
            finished_at=time.time(),
        )
        log.info("run %s %s%s", run.id, state, f" ({reason})" if reason else "")

    def _recover(self) -> None:
        """Runs marked running (or submitted) by a service that is gone: each backend re-attaches to its job,
        and the first look settles the jobs that ended meanwhile."""
        for run in self._submitted() + self.store.list(("running",)):
            backend = self._backend_of(run)
            if run.state == "running" and run.pid is None and run.job_id is None:
                pid, started = backend.recorded_process(run)  # the service died before recording it
                self.store.update(run.id, pid=pid, pid_start=started, job_id=None if pid is None else str(pid))
                run = self.store.get(run.id)
            line = backend.reattach(run)
            if line:
                _note(run, line)
                log.info("run %s: %s", run.id, line)
            self._watch(run)


def _note(run: Run, text: str) -> None:
    """A line from the service in the run's log, so the log tells the whole story."""
    launcher.note(Path(run.run_dir), text)


def _lock_directory(runs_dir: Path):
    """Hold RUNS_DIR/.service.lock for the life of the service: two services would both start queued runs."""
    handle = open(runs_dir / ".service.lock", "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise RuntimeError(f"another grpo-config service manages runs in {runs_dir}")
    return handle

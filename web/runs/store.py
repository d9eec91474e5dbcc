"""The runs database: one SQLite file in WAL mode, written by the service's process only.

Everything the service knows about a run is a row here, committed before the service acts on it (a run is
marked running with its pid before anyone is told), so a restart finds every run and every metric it had
ingested. Metrics are also copied in, so they outlive their output_dir.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    reason TEXT,
    created_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    config_text TEXT NOT NULL,
    config_format TEXT NOT NULL,
    world_size INTEGER NOT NULL,
    output_dir TEXT NOT NULL,
    run_dir TEXT NOT NULL,
    resume_checkpoint TEXT,
    resumed_from TEXT,
    warnings TEXT NOT NULL DEFAULT '[]',
    pid INTEGER,
    pid_start INTEGER,
    exit_code INTEGER,
    cancel_requested_at REAL,
    metrics_inode INTEGER,
    metrics_offset INTEGER NOT NULL DEFAULT 0,
    backend TEXT NOT NULL DEFAULT 'local',
    error TEXT,
    replaced_by TEXT,
    overrides TEXT NOT NULL DEFAULT '{}',
    job_id TEXT,
    job_state TEXT,
    job_reason TEXT,
    resumed_by TEXT,
    completions_end INTEGER
);
CREATE INDEX IF NOT EXISTS runs_state ON runs (state);
CREATE TABLE IF NOT EXISTS metrics (
    run_id TEXT NOT NULL REFERENCES runs (id),
    seq INTEGER NOT NULL,
    step INTEGER,
    record TEXT NOT NULL,
    seen REAL,
    PRIMARY KEY (run_id, seq)
);
"""

# Columns added after the first release, for databases created before them.
ADDED_COLUMNS = {
    "backend": "TEXT NOT NULL DEFAULT 'local'",
    "error": "TEXT",
    "replaced_by": "TEXT",
    "overrides": "TEXT NOT NULL DEFAULT '{}'",
    "job_id": "TEXT",
    "job_state": "TEXT",
    "job_reason": "TEXT",
    "resumed_by": "TEXT",
    "completions_end": "INTEGER",
}
# A backend's job once had columns of its own: (backend, its id, state and reason columns). A database written
# then is migrated once, when it is opened: the values move to job_*, the old columns go.
BACKEND_COLUMNS = (
    ("slurm", "slurm_job_id", "slurm_state", "slurm_reason"),
    ("ray", "ray_job_id", "ray_state", "ray_reason"),
)

# ... and to the metrics: when the service read each record (a run's wall-clock pace, for its ETA)
ADDED_METRICS_COLUMNS = {"seen": "REAL"}
PACE_WINDOW = 200  # the latest records the pace is measured over

ACTIVE = ("queued", "running")
FINISHED = ("succeeded", "failed", "cancelled")


@dataclass
class Run:
    id: str
    seq: int
    state: str
    reason: str | None
    created_at: float
    started_at: float | None
    finished_at: float | None
    config_text: str
    config_format: str
    world_size: int
    output_dir: str
    run_dir: str
    resume_checkpoint: str | None
    resumed_from: str | None
    warnings: str
    pid: int | None
    pid_start: int | None
    exit_code: int | None
    cancel_requested_at: float | None
    metrics_inode: int | None
    metrics_offset: int
    backend: str = "local"  # the run backend's name (grpo_web.runs.backends): local, slurm, ray, ...
    error: str | None = None  # a failed run's cause, read from its log (the exception, the diagnostics)
    replaced_by: str | None = None  # the run that overwrote this run's output_dir (its outputs are gone)
    overrides: str = "{}"  # JSON {field: value}: paths resolved at validation, passed as --set to the run
    job_id: str | None = None  # the backend's id of the run's job (a Slurm job, a Ray submission, a local pid)
    job_state: str | None = None  # the job's state in the backend's words when last asked (PENDING, RUNNING, ...)
    job_reason: str | None = None  # and the backend's reason or message
    resumed_by: str | None = None  # the run that resumed this one (its successor in the same output_dir): a run's
    # line is resumed_from back, resumed_by on; whatever the successor writes there is not this run's
    completions_end: int | None = None  # the size of the output_dir's completions file when the successor was
    # queued: this run's rows end there (the successor appends its own, from its first step, after them)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED


COLUMNS = [f.name for f in fields(Run)]


class Store:
    """Thread-safe access to the runs database (one connection, one lock: writes are tiny and rare)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a commit survives a crash of the process
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(SCHEMA)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
        for name, kind in ADDED_COLUMNS.items():
            if name not in present:
                self._db.execute(f"ALTER TABLE runs ADD COLUMN {name} {kind}")
        _move_backend_columns(self._db, present)
        if "resumed_by" not in present:
            _link_successors(self._db)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(metrics)")}
        for name, kind in ADDED_METRICS_COLUMNS.items():
            if name not in present:
                self._db.execute(f"ALTER TABLE metrics ADD COLUMN {name} {kind}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def insert(self, **values: Any) -> Run:
        values.setdefault("created_at", time.time())
        with self._lock:
            values["seq"] = self._db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM runs").fetchone()[0]
            names = ", ".join(values)
            self._db.execute(
                f"INSERT INTO runs ({names}) VALUES ({', '.join('?' * len(values))})", tuple(values.values())
            )
        return self.get(values["id"])

    def update(self, run_id: str, **values: Any) -> None:
        assignments = ", ".join(f"{name} = ?" for name in values)
        with self._lock:
            self._db.execute(f"UPDATE runs SET {assignments} WHERE id = ?", (*values.values(), run_id))

    def get(self, run_id: str) -> Run | None:
        rows = self._rows(f"SELECT {', '.join(COLUMNS)} FROM runs WHERE id = ?", (run_id,))
        return Run(*rows[0]) if rows else None

    def list(self, states: tuple[str, ...] | None = None, limit: int = 1000, backend: str | None = None) -> list[Run]:
        where = [f"state IN ({', '.join('?' * len(states))})"] if states else []
        where += ["backend = ?"] if backend else []
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._rows(
            f"SELECT {', '.join(COLUMNS)} FROM runs {clause} ORDER BY seq DESC LIMIT ?",
            (*(states or ()), *([backend] if backend else []), limit),
        )
        return [Run(*row) for row in rows]

    def newest_of_line(self, run: Run) -> Run:
        """The last run of `run`'s line (the successor of its successor ..., or `run` itself)."""
        seen = {run.id}
        while run.resumed_by and run.resumed_by not in seen:
            successor = self.get(run.resumed_by)
            if successor is None:
                break
            seen.add(successor.id)
            run = successor
        return run

    def owners(self, output_dir: str) -> list[Run]:
        """The runs that wrote `output_dir` and were not overwritten since, newest first (a run and the runs that
        resumed it)."""
        rows = self._rows(
            f"SELECT {', '.join(COLUMNS)} FROM runs WHERE output_dir = ? AND replaced_by IS NULL ORDER BY seq DESC",
            (output_dir,),
        )
        return [Run(*row) for row in rows]

    def queued(self) -> list[Run]:
        """Queued runs, oldest first."""
        return list(reversed(self.list(("queued",))))

    def add_metrics(self, run_id: str, records: list[dict], offset: int, inode: int | None) -> None:
        """Append ingested records and move the file offset, in one transaction (no record twice, none lost)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                start = self._db.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM metrics WHERE run_id = ?", (run_id,)
                ).fetchone()[0]
                seen = time.time()
                self._db.executemany(
                    "INSERT INTO metrics (run_id, seq, step, record, seen) VALUES (?, ?, ?, ?, ?)",
                    [(run_id, start + i + 1, _step(r), json.dumps(r), seen) for i, r in enumerate(records)],
                )
                self._db.execute(
                    "UPDATE runs SET metrics_offset = ?, metrics_inode = ? WHERE id = ?", (offset, inode, run_id)
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def forget_metrics(self, run_id: str) -> None:
        """The metrics file was replaced (a fresh run truncates it): start again from its beginning."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM metrics WHERE run_id = ?", (run_id,))
            self._db.execute("UPDATE runs SET metrics_offset = 0, metrics_inode = NULL WHERE id = ?", (run_id,))
            self._db.execute("COMMIT")

    def metrics(self, run_id: str, after_step: int | None = None, until_step: int | None = None) -> list[dict]:
        """The run's records in logging order (append-only: a record once served never changes), of the steps
        after `after_step` and up to `until_step` (a record without a step counts as step 0)."""
        rows = self._rows(
            "SELECT record FROM metrics WHERE run_id = ? AND COALESCE(step, 0) > ? "
            "AND COALESCE(step, 0) <= ? ORDER BY seq",
            (run_id, -1 if after_step is None else after_step, (1 << 62) if until_step is None else until_step),
        )
        return [json.loads(record) for (record,) in rows]

    def copy_metrics(self, source: str, target: str, until_step: int) -> None:
        """A resumed run's history: its parent's records up to the checkpoint it starts from."""
        with self._lock:
            self._db.execute(
                "INSERT INTO metrics (run_id, seq, step, record) SELECT ?, seq, step, record "
                "FROM metrics WHERE run_id = ? AND step <= ?",
                (target, source, until_step),
            )

    def pace(self, run_id: str) -> float | None:
        """Wall-clock seconds a step, over the run's latest records as the service read them: from the last record
        of the first batch read in that window to the last record read. Everything a step costs counts (logging,
        evaluation, checkpoints), which the runtime's own step_time leaves out. None until two reads apart."""
        rows = self._rows(
            "SELECT step, seen FROM metrics WHERE run_id = ? AND seen IS NOT NULL AND step IS NOT NULL "
            "ORDER BY seq DESC LIMIT ?",
            (run_id, PACE_WINDOW),
        )[::-1]
        if len(rows) < 2:
            return None
        anchor = [row for row in rows if row[1] == rows[0][1]][-1]
        (step, seen), (first_step, first_seen) = rows[-1], anchor
        return (seen - first_seen) / (step - first_step) if seen > first_seen and step > first_step else None

    def latest_value(self, run_id: str, key: str) -> Any:
        """The last value logged under `key` (an evaluation record after a step has no training reward)."""
        rows = self._rows(
            "SELECT json_extract(record, ?) FROM metrics WHERE run_id = ? AND "
            "json_type(record, ?) IN ('integer', 'real') ORDER BY seq DESC LIMIT 1",
            (f'$."{key}"', run_id, f'$."{key}"'),
        )
        return rows[0][0] if rows else None

    def latest_metrics(self, run_id: str) -> dict | None:
        rows = self._rows("SELECT record FROM metrics WHERE run_id = ? ORDER BY seq DESC LIMIT 1", (run_id,))
        return json.loads(rows[0][0]) if rows else None


def _move_backend_columns(db: sqlite3.Connection, present: set[str]) -> None:
    """The one-time migration of a database written when Slurm and Ray had columns of their own: each run's
    job moves to job_id / job_state / job_reason, a local run's job id becomes its pid, the old columns are
    dropped; all in one transaction, so a crash leaves the old shape to migrate again."""
    old = [names for names in BACKEND_COLUMNS if names[1] in present]
    if not old:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for backend, job_id, state, reason in old:
            db.execute(
                f"UPDATE runs SET job_id = {job_id}, job_state = {state}, job_reason = {reason} "
                "WHERE backend = ? AND job_id IS NULL",
                (backend,),
            )
        db.execute(
            "UPDATE runs SET job_id = CAST(pid AS TEXT) WHERE backend = 'local' AND job_id IS NULL AND pid IS NOT NULL"
        )
        for names in old:
            for column in names[1:]:
                db.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _link_successors(db: sqlite3.Connection) -> None:
    """The one-time migration of a database written before runs named their successor: each run that another
    run resumed (its resumed_from) gets resumed_by, the newest such run; in one transaction."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            "UPDATE runs SET resumed_by = (SELECT child.id FROM runs AS child WHERE "
            "child.resumed_from = runs.id ORDER BY child.seq DESC LIMIT 1) WHERE resumed_by IS NULL"
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _step(record: dict) -> int | None:
    step = record.get("step")
    return step if isinstance(step, int) else None

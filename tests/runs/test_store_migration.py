"""A runs database written when Slurm and Ray had columns of their own (slurm_job_id, ray_state, ...) opens with
every run's job in the generic job_id / job_state / job_reason columns, and the old columns gone."""

from __future__ import annotations

import sqlite3

from grpo_web.runs.store import Store

# The runs table as the service wrote it before the migration (the shape of existing databases).
OLD_SHAPE = """
CREATE TABLE runs (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    reason TEXT, created_at REAL NOT NULL, started_at REAL, finished_at REAL, config_text TEXT NOT NULL,
    config_format TEXT NOT NULL, world_size INTEGER NOT NULL, output_dir TEXT NOT NULL, run_dir TEXT NOT NULL,
    resume_checkpoint TEXT, resumed_from TEXT, warnings TEXT NOT NULL DEFAULT '[]', pid INTEGER, pid_start INTEGER,
    exit_code INTEGER, cancel_requested_at REAL, metrics_inode INTEGER, metrics_offset INTEGER NOT NULL DEFAULT 0,
    backend TEXT NOT NULL DEFAULT 'local', slurm_job_id TEXT, slurm_state TEXT, slurm_reason TEXT, error TEXT,
    replaced_by TEXT, overrides TEXT NOT NULL DEFAULT '{}', ray_job_id TEXT, ray_state TEXT, ray_reason TEXT
);
CREATE TABLE metrics (run_id TEXT NOT NULL REFERENCES runs (id), seq INTEGER NOT NULL, step INTEGER,
                      record TEXT NOT NULL, PRIMARY KEY (run_id, seq));
"""

RUNS = [  # id, state, backend, pid, slurm job/state/reason, ray job/state/reason
    ("slurm1", "queued", "slurm", None, "4711", "PENDING", "Resources", None, None, None),
    ("ray1", "failed", "ray", None, None, None, None, "grpo-ray1-0-ab", "FAILED", "the driver exited"),
    ("local1", "running", "local", 321, None, None, None, None, None, None),
    ("local2", "queued", "local", None, None, None, None, None, None, None),
]


def old_database(path):
    db = sqlite3.connect(str(path))
    db.executescript(OLD_SHAPE)
    for seq, (run_id, state, backend, pid, *jobs) in enumerate(RUNS, 1):
        db.execute(
            "INSERT INTO runs (id, seq, state, created_at, config_text, config_format, world_size, output_dir, "
            "run_dir, backend, pid, slurm_job_id, slurm_state, slurm_reason, ray_job_id, ray_state, ray_reason) "
            "VALUES (?, ?, ?, 0, '{}', 'json', 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, seq, state, f"/out/{run_id}", f"/runs/{run_id}", backend, pid, *jobs),
        )
    db.execute("INSERT INTO metrics (run_id, seq, step, record) VALUES ('ray1', 1, 1, '{\"step\": 1}')")
    db.commit()
    db.close()


def test_an_old_database_opens_with_its_jobs_in_the_generic_columns(tmp_path):
    path = tmp_path / "runs.sqlite3"
    old_database(path)
    store = Store(path)
    jobs = {run.id: (run.backend, run.job_id, run.job_state, run.job_reason) for run in store.list()}
    assert jobs == {
        "slurm1": ("slurm", "4711", "PENDING", "Resources"),
        "ray1": ("ray", "grpo-ray1-0-ab", "FAILED", "the driver exited"),
        "local1": ("local", "321", None, None),  # a local run's job is its process
        "local2": ("local", None, None, None),
    }
    assert store.metrics("ray1") == [{"step": 1}]  # the rest of the database is untouched
    store.update("slurm1", job_state="RUNNING", job_reason=None)
    store.close()

    columns = {row[1] for row in sqlite3.connect(str(path)).execute("PRAGMA table_info(runs)")}
    assert not {c for c in columns if c.startswith(("slurm_", "ray_"))} and {"job_id", "job_state"} <= columns
    again = Store(path)  # a second open finds nothing to migrate and keeps what was written since
    assert (again.get("slurm1").job_id, again.get("slurm1").job_state) == ("4711", "RUNNING")
    again.close()

"""A runs database written by the first release of the service (no backend, job, successor or completions_end
columns; metrics without the time they were read) opens with its runs, in the API and on the runs page, and a line
resumed then shows each run its own completions: where the successor began appending is worked out once from the
completions file (where the steps went back), so a step both runs trained is shown by each with its own rows.

The line on disk is tests/support/run_line.py's: a run cancelled at step 1482, resumed from checkpoint-1000 by a
run that trained to 5000 in the same output_dir."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from grpo_web.runs.store import Store
from tests.support.run_line import CHILD, PARENT, seed_line

pytest.importorskip("uvicorn", reason="the service tests need uvicorn")
httpx = pytest.importorskip("httpx", reason="the service tests need httpx")

TOKEN = "old-store-token-" + "z" * 20

# The runs and metrics tables as the first release wrote them.
FIRST_SHAPE = """
CREATE TABLE runs (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    reason TEXT, created_at REAL NOT NULL, started_at REAL, finished_at REAL, config_text TEXT NOT NULL,
    config_format TEXT NOT NULL, world_size INTEGER NOT NULL, output_dir TEXT NOT NULL, run_dir TEXT NOT NULL,
    resume_checkpoint TEXT, resumed_from TEXT, warnings TEXT NOT NULL DEFAULT '[]', pid INTEGER, pid_start INTEGER,
    exit_code INTEGER, cancel_requested_at REAL, metrics_inode INTEGER, metrics_offset INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_state ON runs (state);
CREATE TABLE metrics (run_id TEXT NOT NULL REFERENCES runs (id), seq INTEGER NOT NULL, step INTEGER,
                      record TEXT NOT NULL, PRIMARY KEY (run_id, seq));
"""
FIRST_COLUMNS = (
    "id",
    "seq",
    "state",
    "reason",
    "created_at",
    "started_at",
    "finished_at",
    "config_text",
    "config_format",
    "world_size",
    "output_dir",
    "run_dir",
    "resume_checkpoint",
    "resumed_from",
    "warnings",
    "pid",
    "pid_start",
    "exit_code",
    "cancel_requested_at",
    "metrics_inode",
    "metrics_offset",
)


def old_runs_dir(tmp_path: Path) -> tuple[Path, int]:
    """The line on disk and its runs in a first-release database at runs_dir/runs.sqlite3; and the byte where the
    successor began appending (what the service would have recorded, had it known)."""
    runs_dir = tmp_path / "runs"
    scratch, output = seed_line(runs_dir, link=False, store=Store(tmp_path / "scratch.sqlite3"))
    rows = [[getattr(run, name) for name in FIRST_COLUMNS] for run in reversed(scratch.list())]
    metrics = [
        (run_id, seq, record.get("step"), json.dumps(record))
        for run_id in (PARENT, CHILD)
        for seq, record in enumerate(scratch.metrics(run_id), 1)
    ]
    scratch.close()
    old = sqlite3.connect(str(runs_dir / "runs.sqlite3"))
    old.executescript(FIRST_SHAPE)
    old.executemany(
        f"INSERT INTO runs ({', '.join(FIRST_COLUMNS)}) VALUES ({', '.join('?' * len(FIRST_COLUMNS))})", rows
    )
    old.executemany("INSERT INTO metrics (run_id, seq, step, record) VALUES (?, ?, ?, ?)", metrics)
    old.commit()
    old.close()
    lines = (output / "completions.jsonl").read_bytes().splitlines(keepends=True)
    return runs_dir, len(lines[0]) + len(lines[1])


@pytest.fixture
def old_service(tmp_path):
    from tests.support.service import offline_runs_server

    runs_dir, end = old_runs_dir(tmp_path)
    with offline_runs_server(runs_dir, TOKEN) as live:
        live.end, live.runs_dir = end, runs_dir
        yield live


def test_a_first_release_database_opens_with_its_runs_and_each_run_its_own_completions(old_service):
    with httpx.Client(base_url=f"{old_service.url}/api/v1/runs", headers={"Authorization": f"Bearer {TOKEN}"}) as api:
        listed = {run["id"]: run for run in api.get(f"{old_service.url}/api/v1/runs").json()["runs"]}
        assert (listed[PARENT]["state"], listed[CHILD]["state"]) == ("cancelled", "succeeded")
        assert listed[PARENT]["resumed_by"] == CHILD and listed[CHILD]["resumed_from"] == PARENT
        parent = api.get(f"/{PARENT}").json()
        assert parent["checkpoints"] == ["checkpoint-500", "checkpoint-1000"] and parent["resume"]["possible"] is False
        # the successor's first step (1001) is not the parent's, though both trained a step 1001
        assert api.get(f"/{PARENT}/completions").json()["steps"] == [1482]
        assert api.get(f"/{PARENT}/completions", params={"step": 1001}).json()["rows"] == []
        assert [json.loads(line)["step"] for line in api.get(f"/{PARENT}/completions.jsonl").text.splitlines()] == [
            1482
        ]
        assert api.get(f"/{CHILD}/completions").json()["steps"] == [1001, 1482, 1483, 5000]
    store = Store(old_service.runs_dir / "runs.sqlite3")  # found once, kept: the next start does not search again
    assert store.get(PARENT).completions_end == old_service.end
    store.close()


@pytest.mark.browser
def test_the_runs_page_shows_the_runs_of_a_first_release_database(browser, old_service):
    from tests.support.browser import open_page

    with open_page(browser, viewport={"width": 1366, "height": 900}) as page:
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.goto(f"{old_service.url}/runs#token={TOKEN}&run={PARENT}")
        page.wait_for_selector(f"#runs-body tr[data-run-id='{CHILD}']")
        assert page.locator("#runs-body tr").count() == 2
        page.wait_for_selector("#run-state[data-state=cancelled]")
        page.wait_for_function("() => document.getElementById('completions-step').options.length > 0")
        steps = page.eval_on_selector_all("#completions-step option", "options => options.map(o => o.value)")
        assert "1001" not in steps and "1482" in steps
        assert problems == []

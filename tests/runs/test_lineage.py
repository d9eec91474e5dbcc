"""A run's record owns its outputs and its line: a resume is a new run that names its parent (resumed_from) and is
named by it (resumed_by). A run resumed already shows only what it wrote itself (its own steps' checkpoints and
completions, never its successor's) and refuses a second resume, naming the run to resume instead.

The line is seeded on disk and in the runs database as a service leaves it: a run cancelled at step 1482 (checkpoints
every 500 steps), resumed from checkpoint-1000 by a run that trained to step 5000 in the same output_dir."""

from __future__ import annotations

import json
import sqlite3

import pytest

from grpo_web.runs import completions, documents, resumable
from grpo_web.runs.manager import RunConflict, RunManager
from grpo_web.runs.store import SCHEMA, Store
from grpo_web.settings import Settings
from tests.support.run_line import CHILD, GRANDCHILD, PARENT, seed_line
from tests.support.service import stop_runs


def test_a_resumed_run_shows_only_what_it_wrote_itself(tmp_path):
    store, output = seed_line(tmp_path)
    parent = documents.detail(store.get(PARENT), store)
    assert parent["resumed_by"] == CHILD and parent["line"] == [PARENT, CHILD]
    assert parent["checkpoints"] == ["checkpoint-500", "checkpoint-1000"]  # not its successor's, up to 5000
    assert parent["step"] == 1482 and parent["progress"]["last_checkpoint_step"] == 1000
    assert parent["progress"]["steps_since_checkpoint"] == 482  # was -3518: step 1482 less checkpoint-5000
    bound = documents.own_completions(store.get(PARENT), store.latest_metrics(PARENT))
    page = completions.read_page(output, None, 50, 0, bound=bound)
    assert page.steps == [1482] and [row["completion"] for row in page.rows] == ["trained by the parent"]
    assert completions.read_page(output, 5000, 50, 0, bound=bound).rows == []  # was "16 of 16 of step 5000"
    assert completions.read_page(output, 1483, 50, 0, bound=bound).total == 0  # generated, never trained
    assert completions.read_page(output, 1001, 50, 0, bound=bound).total == 0  # its successor's step 1001
    _, _, lines = completions.readable_lines(output, bound)  # the download, the same rows
    assert [json.loads(line)["step"] for line in b"".join(lines).splitlines()] == [1482]
    # a line linked by the migration has no end recorded: the run's last step bounds what it shows
    page = completions.read_page(output, None, 50, 0, bound=completions.Bound(1482))
    assert page.steps == [1001, 1482] and 1483 not in [row["step"] for row in page.rows]
    child = documents.detail(store.get(CHILD), store)  # the newest run of the line shows the whole folder
    assert child["resumed_from"] == PARENT and child["resumed_by"] is None and child["line"] == [PARENT, CHILD]
    assert child["checkpoints"][-1] == "checkpoint-5000" and child["progress"]["steps_since_checkpoint"] == 0
    store.close()


def test_a_resume_links_the_line_and_a_second_resume_of_its_parent_is_refused(tmp_path):
    store, output = seed_line(tmp_path / "runs")
    store.close()
    manager = RunManager(Settings(runs=True, runs_dir=tmp_path / "runs", runs_poll_s=60)).open()
    try:
        with pytest.raises(RunConflict, match=f"resumed by run {CHILD}.*resume run {CHILD} instead"):
            manager.resume(PARENT)
        size = (output / "completions.jsonl").stat().st_size
        run = manager.resume(CHILD, max_steps=6000)  # the newest of the line goes on
        assert run.resumed_from == CHILD and run.resume_checkpoint == str(output / "checkpoint-5000")
        child = manager.store.get(CHILD)
        assert child.resumed_by == run.id and child.completions_end == size
        with pytest.raises(RunConflict, match=f"newest run of that line is run {run.id}"):
            manager.resume(PARENT, max_steps=7000)
        manager.cancel(run.id)
    finally:
        manager.close()
        stop_runs(tmp_path / "runs")


def test_the_last_step_a_resumed_run_owns_is_the_one_it_logged(tmp_path):
    store, _ = seed_line(tmp_path)
    assert documents.own_last_step(store.get(PARENT), store.latest_metrics(PARENT)) == 1482
    assert documents.own_last_step(store.get(CHILD), store.latest_metrics(CHILD)) is None  # no successor: no bound
    store.update(PARENT, resume_checkpoint=str(tmp_path / "line-output" / "checkpoint-500"))
    assert documents.own_last_step(store.get(PARENT), None) == 500  # logged nothing: where it started
    store.close()


def test_a_run_resumed_already_refuses_a_second_resume_and_names_the_newest_of_its_line(tmp_path):
    store, _ = seed_line(tmp_path)
    judged = resumable.verdict(store, store.get(PARENT))
    assert not judged.possible and judged.instead == CHILD
    assert f"run {PARENT} was already resumed by run {CHILD}" in judged.reason
    assert f"resume run {CHILD} instead" in judged.reason
    store.insert(
        id=GRANDCHILD,
        state="failed",
        config_text="max_steps: 6000\n",
        config_format="yaml",
        world_size=1,
        output_dir=str(tmp_path / "line-output"),
        run_dir=str(tmp_path / GRANDCHILD),
        resumed_from=CHILD,
    )
    store.update(CHILD, resumed_by=GRANDCHILD)
    judged = resumable.verdict(store, store.get(PARENT))
    assert judged.instead == GRANDCHILD and f"the newest run of that line is run {GRANDCHILD}" in judged.reason
    assert resumable.verdict(store, store.get(GRANDCHILD)).possible  # the newest of the line is the one to resume
    assert documents.detail(store.get(CHILD), store)["line"] == [PARENT, CHILD, GRANDCHILD]
    store.close()


def test_a_database_written_before_runs_named_their_successor_links_them_when_opened(tmp_path):
    path = tmp_path / "runs.sqlite3"
    old = sqlite3.connect(str(path))
    old.executescript(SCHEMA.replace(",\n    resumed_by TEXT", ""))  # the runs table before the column
    line = ((PARENT, None), (CHILD, PARENT), (GRANDCHILD, CHILD), ("0000000000d4", None))
    for seq, (run_id, parent) in enumerate(line, 1):
        old.execute(
            "INSERT INTO runs (id, seq, state, created_at, config_text, config_format, world_size, output_dir, "
            "run_dir, resumed_from) VALUES (?, ?, 'failed', 0, '', 'yaml', 1, '/out', ?, ?)",
            (run_id, seq, f"/runs/{run_id}", parent),
        )
    old.commit()
    old.close()
    store = Store(path)
    assert {run.id: run.resumed_by for run in store.list()} == {
        PARENT: CHILD,
        CHILD: GRANDCHILD,
        GRANDCHILD: None,
        "0000000000d4": None,
    }
    assert store.newest_of_line(store.get(PARENT)).id == GRANDCHILD
    store.update(GRANDCHILD, resumed_by="0000000000d4")
    store.close()
    again = Store(path)  # a second open migrates nothing and keeps what was written since
    assert again.get(GRANDCHILD).resumed_by == "0000000000d4"
    again.close()


def test_the_runs_api_shows_the_line_and_answers_a_second_resume_with_409(tmp_path):
    """Over HTTP (the runs page's view): the parent's page, its completions, its download and its Resume."""
    pytest.importorskip("uvicorn")
    import httpx

    from tests.support.service import start_server

    store, _ = seed_line(tmp_path / "runs")
    store.close()
    server, thread, url = start_server(Settings(runs=True, token="t" * 32, runs_dir=tmp_path / "runs", runs_poll_s=60))
    try:
        with httpx.Client(base_url=f"{url}/api/v1/runs", headers={"Authorization": "Bearer " + "t" * 32}) as client:
            parent = client.get(f"/{PARENT}").json()
            assert (parent["resumed_by"], parent["line"], parent["checkpoints"][-1]) == (
                CHILD,
                [PARENT, CHILD],
                "checkpoint-1000",
            )
            assert parent["resume"]["possible"] is False and parent["resume"]["instead"] == CHILD
            listed = {run["id"]: run for run in client.get(f"{url}/api/v1/runs").json()["runs"]}
            assert listed[PARENT]["resumed_by"] == CHILD and listed[CHILD]["resumed_from"] == PARENT
            assert client.get(f"/{PARENT}/completions").json()["steps"] == [1482]
            assert client.get(f"/{CHILD}/completions").json()["steps"] == [1001, 1482, 1483, 5000]
            assert [
                json.loads(line)["step"] for line in client.get(f"/{PARENT}/completions.jsonl").text.splitlines()
            ] == [1482]
            refused = client.post(f"/{PARENT}/resume")
            assert refused.status_code == 409 and f"resume run {CHILD} instead" in refused.text
    finally:
        server.should_exit = True
        thread.join(timeout=10)

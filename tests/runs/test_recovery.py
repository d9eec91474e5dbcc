"""The run manager after a service died: real processes under the real wrapper, a real SQLite file, no training.

Each test plays the dead service: it starts `python -m grpo_web.runs.wrapper RUN_DIR -- COMMAND` in a session of its
own and records it as running in the database, then opens a RunManager on that directory as a restarted service
would. The test process stays the wrapper's parent and never reaps it, so a finished wrapper is a zombie: exactly
what an orphaned run looks like under a PID 1 that does not reap.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grpo_web.runs import outputs, procs
from grpo_web.runs.launcher import launch_command
from grpo_web.runs.local import describe_exit
from grpo_web.runs.manager import QueueFull, RunConflict, RunManager
from grpo_web.runs.store import Store
from grpo_web.settings import Settings
from tests.support.env import wait_for


@pytest.fixture
def runs_dir(tmp_path) -> Path:
    return tmp_path / "runs"


@pytest.fixture
def open_manager(runs_dir):
    opened: list[RunManager] = []

    def make(**overrides) -> RunManager:
        settings = Settings(runs=True, runs_dir=runs_dir, runs_poll_s=0.1, runs_cancel_grace_s=0.5, **overrides)
        manager = RunManager(settings).open()
        opened.append(manager)
        return manager

    yield make
    for manager in opened:
        manager.close()
    for record in runs_dir.glob("*/process.json"):
        found = json.loads(record.read_text())
        procs.signal_run(found["pid"], found["start_time"], signal.SIGKILL)


def wrapped(runs_dir: Path, run_id: str, code: str, record_pid: bool = True) -> tuple[subprocess.Popen, dict]:
    """Start COMMAND (python -c CODE) under the wrapper and record the run as a dead service left it."""
    run_dir = runs_dir / run_id
    run_dir.mkdir(parents=True)
    with (run_dir / "run.log").open("ab") as log:
        popen = subprocess.Popen(
            [sys.executable, "-m", "grpo_web.runs.wrapper", str(run_dir), "--", sys.executable, "-c", code],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_for(lambda: (run_dir / "process.json").exists(), 20, "the wrapper to record itself")
    process = json.loads((run_dir / "process.json").read_text())
    assert process["pid"] == popen.pid and process["start_time"] == procs.start_time(popen.pid)
    store = Store(runs_dir / "runs.sqlite3")
    store.insert(
        id=run_id,
        state="running",
        config_text="{}\n",
        config_format="json",
        world_size=1,
        output_dir=str(run_dir / "output"),
        run_dir=str(run_dir),
        started_at=time.time(),
        pid=process["pid"] if record_pid else None,
        pid_start=process["start_time"] if record_pid else None,
    )
    store.close()
    return popen, process


def wait_finished(manager: RunManager, run_id: str, timeout: float = 20):
    wait_for(lambda: manager.store.get(run_id).finished, timeout, f"run {run_id} to finish")
    return manager.store.get(run_id)


@pytest.mark.parametrize("exit_code,state", [(0, "succeeded"), (3, "failed")])
def test_a_living_run_is_reattached_and_ends_with_its_recorded_exit_code(runs_dir, open_manager, exit_code, state):
    wrapped(runs_dir, "aaaaaaaaaaa1", f"import time; time.sleep(2); raise SystemExit({exit_code})")
    manager = open_manager()
    assert manager.store.get("aaaaaaaaaaa1").state == "running"
    run = wait_finished(manager, "aaaaaaaaaaa1")
    assert (run.state, run.exit_code) == (state, exit_code)  # from exit.json: the service was not the parent
    assert run.reason == (None if exit_code == 0 else "exited with code 3; the log says why")
    assert "re-attached to the run's process" in (runs_dir / "aaaaaaaaaaa1" / "run.log").read_text()


def test_a_run_gone_without_an_exit_status_is_marked_failed(runs_dir, open_manager):
    popen, process = wrapped(runs_dir, "aaaaaaaaaaa2", "import time; time.sleep(60)")
    assert procs.signal_run(process["pid"], process["start_time"], signal.SIGKILL)
    wait_for(lambda: not procs.alive(process["pid"], process["start_time"]), 10, "the run to die")
    run = open_manager().store.get("aaaaaaaaaaa2")
    assert run.state == "failed" and run.exit_code is None and "left no exit status" in run.reason
    assert run.finished_at is not None


def test_a_reused_pid_is_never_taken_for_the_run(runs_dir, open_manager):
    """Same pid, another start time: a different process. It is neither re-attached nor signalled."""
    popen, process = wrapped(runs_dir, "aaaaaaaaaaa3", "import time; time.sleep(60)")
    store = Store(runs_dir / "runs.sqlite3")
    store.update("aaaaaaaaaaa3", pid_start=process["start_time"] - 1)
    store.close()
    manager = open_manager()
    assert manager.store.get("aaaaaaaaaaa3").state == "failed"
    with pytest.raises(RunConflict):
        manager.cancel("aaaaaaaaaaa3")
    assert procs.alive(process["pid"], process["start_time"])  # the unrelated process lives on


def test_a_run_recorded_without_its_pid_is_found_from_the_wrappers_record(runs_dir, open_manager):
    wrapped(runs_dir, "aaaaaaaaaaa4", "import time; time.sleep(1.5)", record_pid=False)
    manager = open_manager()
    assert manager.store.get("aaaaaaaaaaa4").state == "running"
    assert wait_finished(manager, "aaaaaaaaaaa4").state == "succeeded"


def test_cancel_sends_sigterm_to_the_group_then_sigkill_after_the_grace_period(runs_dir, open_manager):
    stubborn = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True);"
        " time.sleep(60)"
    )
    popen, process = wrapped(runs_dir, "aaaaaaaaaaa5", stubborn)
    log = runs_dir / "aaaaaaaaaaa5" / "run.log"
    wait_for(lambda: "ready" in log.read_text(), 20, "the command to ignore SIGTERM")
    child = procs.descendants(process["pid"])
    manager = open_manager()
    started = time.monotonic()
    assert manager.cancel("aaaaaaaaaaa5").cancel_requested_at is not None
    run = wait_finished(manager, "aaaaaaaaaaa5")
    assert run.state == "cancelled" and run.reason == "cancelled on request"
    assert time.monotonic() - started >= 0.5  # SIGTERM was ignored: only the SIGKILL after the grace ended it
    assert not any(procs.alive(pid, procs.start_time(pid)) for pid in child)
    assert "SIGTERM sent" in log.read_text() and "SIGKILL sent" in log.read_text()


def test_a_queued_run_is_cancelled_before_it_starts(runs_dir, open_manager):
    wrapped(runs_dir, "aaaaaaaaaaa6", "import time; time.sleep(30)")  # holds the only slot
    manager = open_manager(runs_max_concurrent=1, runs_max_queued=1)
    queued = manager.submit("model_name_or_path: m\n", "yaml", 1, None, None)
    assert queued.state == "queued" and (Path(queued.run_dir) / "config.yaml").read_text() == "model_name_or_path: m\n"
    with pytest.raises(QueueFull):  # runs_max_queued=1
        manager.submit("model_name_or_path: m\n", "yaml", 1, None, None)
    run = manager.cancel(queued.id)
    assert (run.state, run.reason) == ("cancelled", "cancelled before it started")
    assert not (Path(queued.run_dir) / "process.json").exists()


def test_one_runs_directory_has_one_service(runs_dir, open_manager):
    open_manager()
    with pytest.raises(RuntimeError, match="another grpo-config service"):
        RunManager(Settings(runs=True, runs_dir=runs_dir))


def test_metrics_are_copied_line_by_line_and_start_over_when_the_file_is_replaced(runs_dir):
    store = Store(runs_dir / "runs.sqlite3")
    run = store.insert(
        id="aaaaaaaaaaa7",
        state="running",
        config_text="",
        config_format="yaml",
        world_size=1,
        output_dir=str(runs_dir / "out"),
        run_dir=str(runs_dir / "aaaaaaaaaaa7"),
    )
    metrics = runs_dir / "out" / "metrics.jsonl"
    metrics.parent.mkdir(parents=True)
    metrics.write_text('{"step": 1, "reward": 0.5}\n{"step": 2, "rew')  # the second line is still being written
    assert outputs.ingest_metrics(store, run) == 1
    with metrics.open("a") as handle:
        handle.write('ard": 0.6}\nnot json\n')
    assert outputs.ingest_metrics(store, store.get(run.id)) == 1
    assert store.metrics(run.id) == [{"step": 1, "reward": 0.5}, {"step": 2, "reward": 0.6}]
    assert outputs.ingest_metrics(store, store.get(run.id)) == 0  # nothing new, nothing twice
    metrics.unlink()  # a fresh run into the same output_dir starts a new file
    metrics.write_text('{"step": 1, "reward": 0.1}\n')
    outputs.ingest_metrics(store, store.get(run.id))
    assert store.metrics(run.id) == [{"step": 1, "reward": 0.1}]
    store.close()


def test_only_complete_checkpoints_are_listed_and_resumed_from(runs_dir):
    from grpo_web.runs.documents import detail

    output = runs_dir / "out"
    for step, files in (
        (2, ("model.safetensors", "rng_state_0.pth", "runtime_state.json")),
        (4, ("model.safetensors", "rng_state_0.pth", "runtime_state.json.partial")),
    ):  # cut short
        folder = output / f"checkpoint-{step}"
        folder.mkdir(parents=True)
        for name in files:
            (folder / name).write_text("x")
    assert outputs.last_complete_checkpoint(output) == output / "checkpoint-2"
    store = Store(runs_dir / "runs.sqlite3")
    run = store.insert(
        id="aaaaaaaaaaa8",
        state="cancelled",
        config_text="",
        config_format="yaml",
        world_size=1,
        output_dir=str(output),
        run_dir=str(runs_dir / "aaaaaaaaaaa8"),
    )
    assert detail(run, store)["checkpoints"] == ["checkpoint-2"]
    store.close()


def test_the_checkpoint_state_file_is_the_runtimes():
    pytest.importorskip("torch")
    from grpo_runtime.outputs.checkpoint import STATE_FILE

    assert outputs.RUNTIME_STATE_FILE == STATE_FILE


@pytest.mark.parametrize(
    "code,text",
    [(0, "exited with code 0"), (1, "exited with code 1"), (143, "killed by SIGTERM"), (-9, "killed by SIGKILL")],
)
def test_exit_statuses_read_as_words(code, text):
    assert describe_exit(code) == text


def test_a_run_is_grpo_launch_with_its_world_size_and_the_resolved_paths(tmp_path):
    command = launch_command(tmp_path / "config.yaml", 2, "/runs/a b/out", "/runs/a b/out/checkpoint-4")
    assert command[1:4] == ["-m", "grpo_schema", "launch"] and command[5:7] == ["--num-processes", "2"]
    # --set values are read as YAML: JSON strings keep any path as it is
    assert command[7:] == [
        "--set",
        'output_dir="/runs/a b/out"',
        "--set",
        'resume_from_checkpoint="/runs/a b/out/checkpoint-4"',
    ]


def test_the_operators_env_allow_list_reaches_the_launched_validation(tmp_path):
    """The service validates posted configs with the allow-list as --allow-env; the child must do the same."""
    command = launch_command(tmp_path / "config.yaml", 1, "/runs/out", None, ("HF_TOKEN", "OMP_NUM_THREADS"))
    assert command[-4:] == ["--allow-env", "HF_TOKEN", "--allow-env", "OMP_NUM_THREADS"]
    from grpo_schema import check_text

    text = "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\nenv:\n  HF_TOKEN: x\n"
    assert not check_text(text).valid and check_text(text, allow_env=["HF_TOKEN"]).valid


def _checkpoints(output, *steps) -> None:
    for step in steps:
        (output / f"checkpoint-{step}").mkdir(parents=True)
        (output / f"checkpoint-{step}" / "runtime_state.json").write_text("{}")


@pytest.mark.parametrize(
    "state,config,logged,possible",
    [
        ("succeeded", "max_steps: 4\n", 4, False),  # every step trained: a resume trains nothing (GRPO-A014)
        ("succeeded", "num_train_epochs: 2\n", 4, False),  # by epochs: its last logged step was its last
        ("succeeded", "max_steps: 8\n", 4, True),  # stopped early (a fatal health finding): steps are left
        ("failed", "max_steps: 4\n", 4, True),  # failed after its last checkpoint: a resume still saves the model
        ("cancelled", "max_steps: 10\n", 4, True),
    ],
)
def test_a_resume_is_offered_only_where_it_trains_something(runs_dir, state, config, logged, possible):
    from grpo_web.runs import resumable

    output = runs_dir / "out"
    _checkpoints(output, 2, 4)
    store = Store(runs_dir / "runs.sqlite3")
    run = store.insert(
        id="aaaaaaaaaaa9",
        state=state,
        config_text=config,
        config_format="yaml",
        world_size=1,
        output_dir=str(output),
        run_dir=str(runs_dir / "aaaaaaaaaaa9"),
    )
    judged = resumable.judge(run, logged)
    assert judged.possible is possible and judged.checkpoint == "checkpoint-4"
    if not possible:
        assert "no step left to train" in judged.reason and "GRPO-A014" in judged.reason
        assert judged.max_steps == 8 and "(e.g. 8) to train 4 more steps" in judged.reason
    # a launch that resumes it with more steps goes on; with as many, it is refused the same way
    assert resumable.judge(run, logged, "max_steps: 6\n").possible
    assert resumable.judge(run, logged, "max_steps: 4\n").possible is (state != "succeeded")
    store.close()

"""The Slurm backend without a cluster: the job's layout and world size, the batch script (and the one
docs/runs.md shows), Slurm's answers read back, the service policy for Slurm runs, and `grpo launch --slurm`
refusing before anything is written or submitted."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from grpo_runtime.clusters.slurm import scheduler
from grpo_runtime.clusters.slurm.layout import Layout, LayoutError, plan_layout, wants_vllm_server
from grpo_runtime.clusters.slurm.script import JobSpec, render
from grpo_schema import check_text
from tests.support.cli import grpo

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "runs.md"

# The recipe docs/runs.md submits: open-r1's layout, 2 training nodes of 8 GPUs and a vLLM server node.
RECIPE = """\
model_name_or_path: Qwen/Qwen2.5-Math-7B
model_revision: main
dataset_name: open-r1/OpenR1-Math-220k
reward_funcs: [accuracy_reward, think_format_reward]
output_dir: /shared/grpo/Qwen2.5-Math-7B-GRPO
bf16: true
per_device_train_batch_size: 16
gradient_accumulation_steps: 4
num_generations: 16
max_completion_length: 4096
use_vllm: true
vllm_mode: server
num_processes: 16
num_machines: 2
save_steps: 100
"""


def example_script() -> str:
    """The script of `grpo launch recipe.yaml --slurm --nodes 2 --gpus-per-node 8 --partition hopper-prod
    --time 2-00:00:00 --requeue`, with the paths docs/runs.md uses."""
    result = check_text(RECIPE, world_size=16)
    assert result.valid, [d.message for d in result.diagnostics if d.severity == "error"]
    layout = plan_layout(result.launch, nodes=2, gpus_per_node=8, vllm_server=wants_vllm_server(result.config))
    run_dir = Path("/shared/grpo/Qwen2.5-Math-7B-GRPO/slurm/20250301-120000")
    return render(
        JobSpec(
            layout=layout,
            run_dir=run_dir,
            config=run_dir / "config.yaml",
            output_dir=str(result.config.output_dir),
            python="/shared/venvs/grpo/bin/python",
            workdir=Path("/shared/grpo"),
            job_name="grpo-recipe",
            partition="hopper-prod",
            time="2-00:00:00",
            requeue=True,
            model=result.config.model_name_or_path,
            model_revision=result.config.model_revision,
        )
    )


def test_the_script_in_the_docs_is_the_one_the_code_writes():
    match = re.search(r"<!-- slurm-example -->\n```bash\n(.*?)```", DOC.read_text(), re.S)
    assert match, "docs/runs.md lost its generated Slurm script"
    assert match.group(1) == example_script(), (
        "docs/runs.md shows another script than the code writes; paste the output of\n"
        "  python -c 'from tests.slurm.test_script import example_script; print(example_script(), end=\"\")'"
    )


def test_the_vllm_server_layout_is_open_r1s():
    script = example_script()
    assert "#SBATCH --nodes=3" in script and "#SBATCH --gpus-per-node=8" in script  # 2 training + 1 vLLM
    assert 'TRAIN_NODES=$(IFS=,; echo "${NODES[*]:0:2}")' in script and "VLLM_NODE=${NODES[2]}" in script
    assert "vllm-serve \\\n    --model Qwen/Qwen2.5-Math-7B --revision main" in script
    assert "--tensor_parallel_size 1 --data_parallel_size 8" in script
    assert "--num-processes 16" in script and "--num_machines 2" in script
    assert '"vllm_server_host=$VLLM_NODE"' in script and '--machine_rank "$SLURM_PROCID"' in script
    assert "#SBATCH --requeue" in script and "RESUME=(--set resume_from_checkpoint=true)" in script


def test_the_script_is_valid_bash():
    checked = subprocess.run(["bash", "-n"], input=example_script(), text=True, capture_output=True)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize(
    "options,world,machines",
    [
        (dict(nodes=2, gpus_per_node=8), 16, 2),
        (dict(nodes=1, processes_per_node=2, tasks_per_node=2), 2, 2),
        (dict(), 1, 1),
    ],
)
def test_world_size_is_nodes_times_processes_per_node(options, world, machines):
    layout = plan_layout({}, **options)
    assert (layout.world_size, layout.machines) == (world, machines)


def test_the_config_fills_in_what_the_options_leave_out():
    assert plan_layout({"num_processes": 8, "num_machines": 2}) == Layout(nodes=2, processes_per_node=4)


@pytest.mark.parametrize(
    "launch,options,words",
    [
        ({"num_processes": 8}, dict(nodes=2, gpus_per_node=8), "num_processes 8 in the config, but the job has 2 node"),
        ({"num_processes": 3}, dict(nodes=2), "does not split over 2 nodes"),
        ({}, dict(processes_per_node=3, tasks_per_node=2), "does not split into --tasks-per-node 2"),
        ({}, dict(gpus_per_node=4, processes_per_node=8), "more than the 4 GPUs per node"),
        ({}, dict(nodes=0), "--nodes must be at least 1"),
    ],
)
def test_layouts_that_make_no_job_are_refused_with_what_to_change(launch, options, words):
    with pytest.raises(LayoutError, match=re.escape(words)):
        plan_layout(launch, **options)


SCONTROL = (
    "JobId=7 JobName=grpo demo UserId=root(0) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) "
    "Requeue=0 Restarts=1 BatchFlag=1 ExitCode=0:15 RunTime=00:01:27 NodeList=vm "
    "WorkDir=/runs/a b/c StdOut=/runs/a b/c/run.log Power="
)


def test_scontrol_answers_are_read_field_by_field():
    fields = scheduler.parse_scontrol(SCONTROL)
    assert fields["JobName"] == "grpo demo" and fields["WorkDir"] == "/runs/a b/c" and fields["Power"] == ""
    assert (fields["JobState"], fields["Reason"], fields["ExitCode"], fields["Restarts"]) == (
        "TIMEOUT",
        "TimeLimit",
        "0:15",
        "1",
    )


@pytest.mark.parametrize(
    "state,reason,code,cancel,expected",
    [
        ("COMPLETED", "None", 0, False, ("succeeded", 0, None)),
        (
            "TIMEOUT",
            "TimeLimit",
            143,
            False,
            (
                "failed",
                143,
                "Slurm job 7 was killed at its time limit (TIMEOUT, "
                "Reason=TimeLimit); resume it from its last complete "
                "checkpoint",
            ),
        ),
        ("CANCELLED", "None", 0, True, ("cancelled", 0, "cancelled on request; Slurm job 7 was cancelled (CANCELLED)")),
        (
            "FAILED",
            "NonZeroExitCode",
            1,
            False,
            ("failed", 1, "Slurm job 7 failed with exit code 1 (FAILED, Reason=NonZeroExitCode)"),
        ),
        (
            "NODE_FAIL",
            None,
            None,
            False,
            (
                "failed",
                None,
                "Slurm job 7 was ended by a node failure (NODE_FAIL); resume it from its last complete checkpoint",
            ),
        ),
    ],
)
def test_a_jobs_end_becomes_the_runs_with_slurms_reason(state, reason, code, cancel, expected):
    from grpo_runtime.clusters.slurm.backend import SlurmBackend, state_of

    assert SlurmBackend().outcome(state_of(scheduler.JobStatus("7", state, reason, code)), cancel) == expected


@pytest.mark.parametrize("text,code", [("0:0", 0), ("1:0", 1), ("0:15", 143), ("", None), ("n/a", None)])
def test_exit_codes_read_as_one_status(text, code):
    assert scheduler._exit(text) == code


def test_missing_slurm_commands_are_an_error_not_a_traceback(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(scheduler.SlurmError, match="scontrol is not installed"):
        scheduler.query("1")


@pytest.mark.parametrize("world,codes", [(4, []), (1, []), (3, ["GRPO-X008"]), (8, ["GRPO-X008"])])
def test_the_service_takes_whole_slurm_nodes(world, codes, tmp_path):
    from grpo_schema.engine.policy import ServicePolicy, service_policy

    policy = ServicePolicy(runs_dir=tmp_path, max_processes=64, slurm_node_processes=2, slurm_max_nodes=2)
    text = "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\nnum_generations: 2\n"
    found = service_policy(check_text(text, world_size=world), policy)
    assert [d.code for d in found] == codes and all(d.hint for d in found)


def launch(*args: str, cwd: Path):
    return grpo("launch", *args, cwd=cwd)


CONFIG = (
    "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\nnum_generations: 4\noutput_dir: out\n"
)


def test_launch_slurm_writes_the_script_without_submitting(tmp_path):
    (tmp_path / "run.yaml").write_text(CONFIG)
    answer = launch(
        "run.yaml",
        "--slurm",
        "--nodes",
        "2",
        "--processes-per-node",
        "2",
        "--partition",
        "cpu",
        "--run-dir",
        "job",
        "--no-submit",
        "--sbatch-arg=--constraint=fast",
        cwd=tmp_path,
    )
    assert answer.returncode == 0, answer.stderr
    script = (tmp_path / "job" / "job.sbatch").read_text()
    assert f"CONFIG={tmp_path}/job/config.yaml" in script and f"#SBATCH --chdir={tmp_path}" in script
    assert "#SBATCH --partition=cpu" in script and "#SBATCH --constraint=fast" in script
    assert "--num-processes 4" in script and f"--set 'output_dir=\"{tmp_path}/out\"'" in script
    assert (tmp_path / "job" / "config.yaml").read_text() == CONFIG
    never = grpo("slurm", "status", "job", cwd=tmp_path)
    assert never.returncode == 2 and "never submitted" in never.stderr


def test_launch_slurm_refuses_before_writing_anything(tmp_path):
    (tmp_path / "run.yaml").write_text(CONFIG + "num_processes: 8\n")
    answer = launch("run.yaml", "--slurm", "--nodes", "2", "--gpus-per-node", "8", "--run-dir", "job", cwd=tmp_path)
    assert answer.returncode == 2 and "num_processes 8 in the config, but the job has 2 nodes" in answer.stderr
    (tmp_path / "bad.yaml").write_text(CONFIG.replace("num_generations: 4", "num_generations: 3"))
    answer = launch(
        "bad.yaml", "--slurm", "--nodes", "1", "--processes-per-node", "2", "--run-dir", "job", cwd=tmp_path
    )
    assert answer.returncode == 1 and "GRPO-" in answer.stderr and "not a valid config for 2" in answer.stderr
    assert not (tmp_path / "job").exists()


def test_a_service_runs_resolved_paths_reach_the_batch_script(tmp_path):
    """The service resolves a config's relative model and dataset paths against its folder; a Slurm job works in
    RUN_DIR, so those paths go in as `--set` values (and the vLLM node serves the resolved model), as a local run's do."""
    from grpo_web.runs.settings import RunsSettings
    from grpo_web.runs.slurm import job_spec
    from grpo_web.runs.store import Run

    text = "model_name_or_path: demo/model\ndataset_name: demo/data\nreward_funcs: [think_format_reward]\n"
    resolved = {"model_name_or_path": "/srv/grpo/demo/model", "dataset_name": "/srv/grpo/demo/data"}
    run = Run(
        id="r1",
        seq=1,
        state="queued",
        reason=None,
        created_at=0.0,
        started_at=None,
        finished_at=None,
        config_text=text,
        config_format="yaml",
        world_size=1,
        output_dir=str(tmp_path / "out"),
        run_dir=str(tmp_path),
        resume_checkpoint=None,
        resumed_from=None,
        warnings="[]",
        pid=None,
        pid_start=None,
        exit_code=None,
        cancel_requested_at=None,
        metrics_inode=None,
        metrics_offset=0,
        backend="slurm",
        overrides=json.dumps({**resolved, "output_dir": str(tmp_path / "out")}),
    )
    spec = job_spec(run, RunsSettings(runs_backend="slurm", runs_dir=tmp_path))
    script = render(spec)
    assert "--set 'model_name_or_path=\"/srv/grpo/demo/model\"'" in script, script
    assert "--set 'dataset_name=\"/srv/grpo/demo/data\"'" in script, script
    assert script.count("output_dir=") == 1  # the job's own output_dir, never twice
    assert spec.model == "/srv/grpo/demo/model"

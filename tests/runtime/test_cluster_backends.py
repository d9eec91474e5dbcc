"""`grpo launch --NAME` and `grpo NAME ...` reach every cluster through one interface
(grpo_runtime.clusters.backend): the flag picks the backend, the follow commands share one parser and one way of
refusing a folder that is not a job's."""

from __future__ import annotations

import pytest

from grpo_runtime.clusters.backends import BACKENDS, chosen
from grpo_schema.cli import main


@pytest.mark.parametrize(
    "argv, name",
    [
        (["c.yaml", "--slurm"], "slurm"),
        (["c.yaml", "--ray", "http://h:8265"], "ray"),
        (["c.yaml", "--ray=http://h:8265"], "ray"),
        (["c.yaml", "--num-processes", "2"], None),
    ],
)
def test_the_launch_flag_picks_the_backend(argv, name):
    found = chosen(argv)
    assert (found.name if found else None) == name


def test_launch_help_names_every_cluster_and_the_emitted_specs(capsys):
    with pytest.raises(SystemExit) as done:
        main(["launch", "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert all(f"--{name}" in out for name in BACKENDS) and "--emit SCHEDULER" in out


@pytest.mark.parametrize("name, record", [("slurm", "job.json"), ("ray", "ray_job.json")])
def test_a_folder_that_is_no_job_is_refused_by_every_follow_command(tmp_path, capsys, name, record):
    for action in ("status", "logs", "wait", "cancel", "resume"):
        assert main([name, action, str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert f"grpo {name}: {tmp_path} is not a job folder written by grpo launch --{name}" in err and record in err


def test_a_slurm_folder_never_submitted_says_so_but_can_be_resumed(tmp_path, capsys):
    from grpo_runtime.clusters.slurm import jobs
    from grpo_runtime.clusters.slurm.layout import Layout
    from grpo_runtime.clusters.slurm.script import JobSpec

    spec = JobSpec(
        layout=Layout(1, 1, 1, 0, False),
        run_dir=tmp_path,
        config=tmp_path / "config.yaml",
        output_dir=str(tmp_path / "out"),
        python="python",
        workdir=tmp_path,
        job_name="grpo-x",
    )
    jobs.save(spec, None)
    assert main(["slurm", "status", str(tmp_path)]) == 2
    assert "was written but never submitted (sbatch" in capsys.readouterr().err
    assert main(["slurm", "resume", str(tmp_path)]) == 2  # no job to follow, but resume is asked of the folder
    assert "has no complete checkpoint to resume from" in capsys.readouterr().err

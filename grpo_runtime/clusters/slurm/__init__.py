"""Runs on a Slurm cluster: the job's shape (layout), its batch script (script), the scheduler's commands
(scheduler: sbatch, squeue/scontrol/sacct, scancel), the job's folder (jobs) and the cluster backend over them
(backend), which `grpo launch CONFIG --slurm` (its options: cli), `grpo slurm ...` and the service's Slurm runs
(grpo_web.runs.slurm) all drive, so a job submitted either way is the same job.

Standard library and grpo_schema only: the service imports this package and never imports torch.
"""

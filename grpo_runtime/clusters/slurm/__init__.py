"""Runs on a Slurm cluster: the job's shape (layout), its batch script (script), and the scheduler's commands
(scheduler: sbatch, squeue/scontrol/sacct, scancel). `grpo launch CONFIG --slurm` (cli) and the service's Slurm
backend (grpo_web.runs.slurm) both use these, so a job submitted either way is the same job.

Standard library and grpo_schema only: the service imports this package and never imports torch.
"""

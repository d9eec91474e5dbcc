"""Runs on a cluster instead of this machine, behind one interface (backend: a job's submit, status, logs, cancel
and outcome, written once per cluster): Slurm (slurm/: `grpo launch --slurm`, `grpo slurm ...`), Ray (ray/:
`grpo launch --ray`, `grpo ray ...`), and the SkyPilot / dstack / Kubernetes specs `grpo launch --emit` prints
(emit). The service's Slurm and Ray runs are driven through the same backends (grpo_web.runs.cluster), so a job is
the same job either way."""

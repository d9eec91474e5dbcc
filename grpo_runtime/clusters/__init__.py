"""Runs on a cluster instead of this machine: Slurm (slurm/: `grpo launch --slurm`, `grpo slurm ...`), Ray (ray/:
`grpo launch --ray`, `grpo ray ...`) and the SkyPilot / dstack / Kubernetes specs `grpo launch --emit` prints
(emit). The service's Slurm and Ray backends use the same modules, so a job is the same job either way."""

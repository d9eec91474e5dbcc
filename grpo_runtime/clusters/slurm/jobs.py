"""A job submitted from the command line: its folder and its record.

`grpo launch CONFIG --slurm` writes one folder per submission (default OUTPUT_DIR/slurm/UTC-TIMESTAMP):
`config.yaml` (a copy of the config, so later edits do not change a queued job), `job.sbatch`, `run.log` (the
job's output) and `job.json` (the job id and everything needed to submit it again or resume it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

from grpo_runtime.clusters.slurm.layout import Layout
from grpo_runtime.clusters.slurm.script import JobSpec

RECORD_FILE = "job.json"


def new_run_dir(output_dir: Path) -> Path:
    """OUTPUT_DIR/slurm/YYYYmmdd-HHMMSS[-N], created (never one that exists)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    root = output_dir / "slurm"
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1000):
        candidate = root / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise OSError(f"no free run folder under {root}")


def save(spec: JobSpec, job_id: str | None, slurm_conf: str | None = None) -> Path:
    record = {
        "job_id": job_id,
        "submitted_at": time.time() if job_id else None,
        "slurm_conf": slurm_conf,
        "spec": _plain(dataclasses.asdict(spec)),
    }
    path = spec.run_dir / RECORD_FILE
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(partial, path)
    return path


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value) if isinstance(value, Path) else value


def load(run_dir: Path) -> tuple[dict, JobSpec]:
    """The record of RUN_DIR and its JobSpec. Raises OSError / ValueError for a folder that is not a job's."""
    record = json.loads((run_dir / RECORD_FILE).read_text())
    values = dict(record["spec"])
    values["layout"] = Layout(**values["layout"])
    for name in ("run_dir", "config", "workdir"):
        values[name] = Path(values[name])
    for name in ("sbatch_args", "overrides", "allow_env"):
        values[name] = tuple(values[name])
    return record, JobSpec(**values)

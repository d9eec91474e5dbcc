"""The batch script of a Slurm job, written as a person would write it: #SBATCH lines, then a few commented
steps. Users keep it, read it and submit it again (`sbatch RUN_DIR/job.sbatch`).

Inside the job every training node runs one or more `srun` tasks; each task is `grpo launch` (validation again,
then `accelerate launch`) as one accelerate machine: num_machines, its machine_rank from SLURM_PROCID, and the
first node as the main process (address and port). With a vLLM server node, `trl vllm-serve` starts there first
and the training processes reach it at that node's name (`vllm_server_host`).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from grpo_runtime.clusters.slurm.layout import Layout

SCRIPT_FILE = "job.sbatch"
LOG_FILE = "run.log"
# The first port of the range a job's main process listens on when the config names none: the port follows the
# job id, so jobs that share a node do not collide.
PORT_BASE, PORT_SPAN = 20000, 20000


@dataclass(frozen=True)
class JobSpec:
    layout: Layout
    run_dir: Path  # the script, the config and the log live here
    config: Path  # the config the job trains (a copy inside run_dir)
    output_dir: str
    python: str  # the interpreter that has grpo-config installed, on every node (a shared filesystem)
    workdir: Path  # the job's working directory: relative paths in the config are read from here
    job_name: str = "grpo"
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    time: str | None = None
    cpus_per_task: int | None = None
    requeue: bool = False
    sbatch_args: tuple[str, ...] = ()  # more #SBATCH options, as `--name=value`
    overrides: tuple[str, ...] = ()  # `--set KEY=VALUE` of the launch, kept for every task
    allow_env: tuple[str, ...] = ()
    resume: str | None = None  # resume_from_checkpoint for this job (a folder)
    main_process_port: int | None = None  # from the config; else one per job
    model: str | None = None  # what the vLLM server serves
    model_revision: str | None = None
    vllm_server_port: int = 8000
    trust_remote_code: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def script_path(self) -> Path:
        return self.run_dir / SCRIPT_FILE

    @property
    def log_path(self) -> Path:
        return self.run_dir / LOG_FILE


def _directive_value(value: str) -> str:
    if "\n" in value or '"' in value:
        raise ValueError(f"{value!r} cannot be written in an #SBATCH line (newline or double quote)")
    return f'"{value}"' if any(c.isspace() for c in value) else value


def _directives(spec: JobSpec) -> list[str]:
    layout = spec.layout
    options: list[tuple[str, object]] = [
        ("job-name", spec.job_name),
        ("nodes", layout.total_nodes),
        ("ntasks-per-node", layout.tasks_per_node),
        ("gpus-per-node", layout.gpus_per_node or None),
        ("cpus-per-task", spec.cpus_per_task),
        ("partition", spec.partition),
        ("account", spec.account),
        ("qos", spec.qos),
        ("time", spec.time),
        ("chdir", str(spec.workdir)),
        ("output", str(spec.log_path)),
        ("open-mode", "append"),
    ]
    lines = [f"#SBATCH --{name}={_directive_value(str(value))}" for name, value in options if value is not None]
    if layout.gpus_per_node and spec.cpus_per_task is None:  # GPU nodes whole: every CPU for their processes
        lines.append("#SBATCH --exclusive")
    lines.append("#SBATCH --requeue" if spec.requeue else "#SBATCH --no-requeue")
    lines += [f"#SBATCH {_directive_value(arg)}" for arg in spec.sbatch_args]
    return lines


def _yaml_value(value: str) -> str:
    """A --set value is read as YAML: a JSON string is a double-quoted YAML scalar, whatever the text holds."""
    return json.dumps(value)


def _launch_lines(spec: JobSpec) -> list[str]:
    """`grpo launch` in one srun task, as lines of words; variables are expanded by the batch shell."""
    layout = spec.layout
    lines = [f'"$PYTHON" -m grpo_schema launch "$CONFIG" --num-processes {layout.world_size}']
    if layout.machines > 1:
        lines.append(
            f'--num_machines {layout.machines} --main_process_ip "$MAIN_PROCESS_IP" '
            '--main_process_port "$MAIN_PROCESS_PORT"'
        )
    sets = [shlex.quote(f"output_dir={_yaml_value(spec.output_dir)}")]
    if spec.resume:
        sets.append(shlex.quote(f"resume_from_checkpoint={_yaml_value(spec.resume)}"))
    if layout.vllm_server:
        sets.append('"vllm_server_host=$VLLM_NODE"')
    sets += [shlex.quote(override) for override in spec.overrides]
    lines += [f"--set {value}" for value in sets]
    if spec.allow_env:
        lines.append(" ".join(f"--allow-env {shlex.quote(name)}" for name in spec.allow_env))
    if spec.requeue:
        lines.append('"${RESUME[@]}"')
    return lines


def _continued(lines: list[str], indent: str = "    ", width: int = 110) -> str:
    """Shell words in continued lines: the groups given, joined while they fit in `width`."""
    out: list[str] = []
    for group in lines:
        if out and len(out[-1]) + 1 + len(group) <= width - 2 and not out[-1].endswith("launch"):
            out[-1] += " " + group
        else:
            out.append(group if not out else indent + group)
    return " \\\n".join(out)


def _header(spec: JobSpec) -> list[str]:
    return [
        "#!/bin/bash",
        "# Slurm batch script written by `grpo launch --slurm` (grpo-config).",
        f"# Job: {spec.layout.describe()}.",
        f"# Edit it if you like and submit it again with:  sbatch {shlex.quote(str(spec.script_path))}",
        *_directives(spec),
        "",
        "set -euo pipefail",
    ]


def _variables(spec: JobSpec) -> list[str]:
    layout = spec.layout
    port = (
        str(spec.main_process_port)
        if spec.main_process_port
        else f"$(({PORT_BASE} + SLURM_JOB_ID % {PORT_SPAN}))  # one port per job: jobs sharing a node do not collide"
    )
    lines = [
        "",
        f"PYTHON={shlex.quote(spec.python)}",
        f"CONFIG={shlex.quote(str(spec.config))}",
        f"OUTPUT_DIR={shlex.quote(spec.output_dir)}",
    ]
    lines += [f"export {name}={shlex.quote(value)}" for name, value in sorted(spec.extra_env.items())]
    lines += [
        "",
        "# The nodes of the job: the first trains as accelerate's main machine"
        + ("; the last runs the vLLM server." if layout.vllm_server else "."),
        'mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")',
    ]
    if layout.vllm_server:
        lines += [
            f'TRAIN_NODES=$(IFS=,; echo "${{NODES[*]:0:{layout.nodes}}}")',
            f"VLLM_NODE=${{NODES[{layout.nodes}]}}",
        ]
    else:
        lines.append('TRAIN_NODES=$(IFS=,; echo "${NODES[*]}")')
    lines += [
        "MAIN_PROCESS_IP=${NODES[0]}",
        f"MAIN_PROCESS_PORT={port}",
        'echo "[grpo-config] job $SLURM_JOB_ID on ${NODES[*]} (restart ${SLURM_RESTART_COUNT:-0})"',
    ]
    return lines


def _requeue(spec: JobSpec) -> list[str]:
    if not spec.requeue:
        return []
    return [
        "",
        "# Requeued after a preemption or a node failure: go on from the newest complete checkpoint.",
        "RESUME=()",
        'if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ] && '
        'compgen -G "$OUTPUT_DIR/checkpoint-*/runtime_state.json" > /dev/null; then',
        "  RESUME=(--set resume_from_checkpoint=true)",
        "fi",
    ]


def _vllm_server(spec: JobSpec) -> list[str]:
    layout = spec.layout
    if not layout.vllm_server:
        return []
    model = [
        "--model",
        shlex.quote(spec.model or ""),
        *(["--revision", shlex.quote(spec.model_revision)] if spec.model_revision else []),
    ]
    lines = [
        'srun --nodes=1 --ntasks=1 --nodelist="$VLLM_NODE"',
        '"$(dirname "$PYTHON")/trl" vllm-serve',
        " ".join(model),
        f"--tensor_parallel_size {layout.vllm_tensor_parallel_size} "
        f"--data_parallel_size {layout.vllm_data_parallel_size}",
        f"--host 0.0.0.0 --port {spec.vllm_server_port}" + (" --trust_remote_code" if spec.trust_remote_code else ""),
    ]
    return [
        "",
        "# The vLLM server, on all GPUs of its node. The trainers wait for it (vllm_server_timeout).",
        _continued(lines) + " &",
        "VLLM_STEP=$!",
    ]


def _training(spec: JobSpec) -> list[str]:
    layout = spec.layout
    srun = " ".join(
        [
            "srun",
            "--kill-on-bad-exit=1",
            f"--nodes={layout.nodes}",
            f"--ntasks={layout.machines}",
            f"--ntasks-per-node={layout.tasks_per_node}",
            '--nodelist="$TRAIN_NODES"',
            *([f"--cpus-per-task={spec.cpus_per_task}"] if spec.cpus_per_task else []),
        ]
    )
    lines = [
        "",
        "# Training: one `grpo launch` per srun task, each an accelerate machine"
        + ("; its machine_rank is the task's" if layout.machines > 1 else "."),
        "# "
        + ("SLURM_PROCID (expanded inside the task). " if layout.machines > 1 else "")
        + "Every task validates the config again before anything starts;",
        "# when one task fails, Slurm ends the others (--kill-on-bad-exit).",
    ]
    rank = ['bash -c \'exec "$@" --machine_rank "$SLURM_PROCID"\' launch'] if layout.machines > 1 else []
    lines += ["status=0", _continued([srun, *rank, *_launch_lines(spec)]) + " || status=$?"]
    if layout.vllm_server:
        lines += ['kill "$VLLM_STEP" 2> /dev/null || true', 'wait "$VLLM_STEP" 2> /dev/null || true']
    lines += ['echo "[grpo-config] training ended with exit status $status"', 'exit "$status"']
    return lines


def render(spec: JobSpec) -> str:
    return "\n".join([*_header(spec), *_variables(spec), *_requeue(spec), *_vllm_server(spec), *_training(spec)]) + "\n"


def write(spec: JobSpec) -> Path:
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    spec.script_path.write_text(render(spec), encoding="utf-8")
    spec.script_path.chmod(0o755)
    return spec.script_path

"""What every emitted target shares: the layout, the command each training node runs (`grpo launch` as one
accelerate machine), the vLLM node's `trl vllm-serve`, and the resume from the newest checkpoint on the volume."""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

from grpo_runtime.clusters.slurm.layout import Layout

VOLUME = "/checkpoints"  # where the checkpoint volume is mounted in every target
WORKDIR = "/workspace"  # where the project and the config are in every node
DEFAULT_PORT = 29500
DONE_MARKER = ".grpo-training-done"  # in output_dir: the training has ended well, the vLLM node stops serving


class Job:
    """Everything the targets share: the layout, the command each node runs, the environment."""

    def __init__(self, args, result, layout: Layout, accelerator: str | None):
        self.layout, self.accelerator, self.args = layout, accelerator, args
        self.name = (args.name or f"grpo-{PurePosixPath(args.file).stem}").lower().replace("_", "-")[:50]
        self.config_name = PurePosixPath(args.file).name
        self.port = int(result.launch.get("main_process_port") or DEFAULT_PORT)
        self.output_dir = f"{VOLUME}/{self.name}"
        self.env = {str(k): str(v) for k, v in (result.env or {}).items()}
        config = result.config
        self.model = str(config.model_name_or_path)
        self.vllm_port = int(getattr(config, "vllm_server_port", 8000) or 8000)
        self.vllm_tp = int(getattr(config, "vllm_tensor_parallel_size", 1) or 1) if layout.vllm_server else 1
        self.overrides = [o for o in args.overrides if not o.startswith("output_dir=")]

    def train_command(self, rank: str, main_ip: str, vllm_host: str | None) -> str:
        """The shell line of one training node; rank, main_ip and vllm_host are shell expressions."""
        layout = self.layout
        words = ["grpo", "launch", shlex.quote(self.args.file), "--num-processes", str(layout.world_size)]
        if layout.nodes > 1:
            words += [
                "--num_machines",
                str(layout.nodes),
                "--machine_rank",
                rank,
                "--main_process_ip",
                main_ip,
                "--main_process_port",
                str(self.port),
            ]
        words += ["--set", shlex.quote(f"output_dir={self.output_dir}")]
        if vllm_host:
            words += ["--set", f'"vllm_server_host={vllm_host}"']
        for override in self.overrides:
            words += ["--set", shlex.quote(override)]
        for name in self.args.allow_env:
            words += ["--allow-env", shlex.quote(name)]
        words.append('"${RESUME[@]}"')
        return " ".join(words)

    def resume_lines(self) -> list[str]:
        """After a preemption the node starts again: go on from the newest complete checkpoint on the volume."""
        return [
            "RESUME=()",
            f'if compgen -G "{self.output_dir}/checkpoint-*/runtime_state.json" > /dev/null; then '
            "RESUME=(--set resume_from_checkpoint=true); fi",
        ]

    def vllm_command(self) -> str:
        return (
            f"trl vllm-serve --model {shlex.quote(self.model)} --tensor-parallel-size {self.vllm_tp} "
            f"--data-parallel-size {max(self.layout.gpus_per_node // self.vllm_tp, 1)} "
            f"--host 0.0.0.0 --port {self.vllm_port}"
        )

    def script(self, rank: str, main_ip: str, vllm_host: str | None) -> str:
        """The whole per-node script: the vLLM node (rank = training nodes) serves, the others train."""
        lines = ["set -euo pipefail", f"mkdir -p {self.output_dir}", *self.resume_lines()]
        train = self.train_command(rank, main_ip, vllm_host)
        if not self.layout.vllm_server:
            return "\n".join([*lines, f"exec {train}"]) + "\n"
        done = f"{self.output_dir}/{DONE_MARKER}"
        lines += [
            f'if [ "{rank}" -eq {self.layout.nodes} ]; then',
            "  # the vLLM node serves until the training leaves its marker on the volume (newer than this start)",
            "  STARTED=$(mktemp)",
            f"  {self.vllm_command()} &",
            "  SERVER=$!",
            '  while kill -0 "$SERVER" 2> /dev/null; do',
            f'    if [ "{done}" -nt "$STARTED" ]; then kill "$SERVER"; wait "$SERVER" || true; exit 0; fi',
            '    sleep "${GRPO_VLLM_POLL_S:-30}"',
            "  done",
            '  wait "$SERVER"',
            "fi",
            f'until curl -sf "http://{vllm_host}:{self.vllm_port}/health/" > /dev/null; do sleep 10; done',
            f"status=0; {train} || status=$?",
            f'if [ "$status" -eq 0 ] && [ "{rank}" -eq 0 ]; then touch "{done}"; fi  # the vLLM node may stop',
            'exit "$status"',
        ]
        return "\n".join(lines) + "\n"

    @property
    def gpus(self) -> int:
        return self.layout.gpus_per_node

"""Measure the memory of grpo_runtime's own training step, part by part, to hold the planner's estimate to it.

The probe's command line (`python -m grpo_runtime.memprobe CASE`): one case measured in this process, or a
multi-process case (`world_size` above 1) as that many fresh processes of one job, each printing its own parts."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys

import torch

from grpo_runtime.memprobe.parts import measure
from grpo_schema.engine.words import noun


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grpo_runtime.memprobe", description=__doc__.splitlines()[0])
    parser.add_argument("case", help="the case as a JSON object")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rank", type=int, default=None, help=argparse.SUPPRESS)  # one process of a job
    args = parser.parse_args(argv)
    case = json.loads(args.case)
    world = int(case.get("world_size", 1))
    if world > 1 and args.rank is None:
        print(json.dumps(run_ranks(args.case, world, args.device)))
        return 0
    torch.set_num_threads(1)
    print(json.dumps(measure(case, args.device)), flush=True)
    leave_the_job()
    return 0


def leave_the_job() -> None:
    """A rank of a multi-process case leaves its process group with the others before it exits, as the trainer
    does (a barrier, then accelerator.end_training): a rank that exits while the other still holds the group's
    connections can be aborted by torch's communication threads ("terminate called without an active
    exception")."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def run_ranks(case: str, world: int, device: str) -> dict:
    """`world` fresh processes of one job (the environment torchrun / accelerate launch set), each measuring its
    own parts; {"ranks": [rank 0's parts, rank 1's, ...]}."""
    with socket.socket() as handle:
        handle.bind(("127.0.0.1", 0))
        port = handle.getsockname()[1]
    procs = []
    for rank in range(world):
        env = {
            **os.environ,
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(world),
            "LOCAL_WORLD_SIZE": str(world),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
        }
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "grpo_runtime.memprobe", case, "--device", device, "--rank", str(rank)],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [proc.communicate()[0] for proc in procs]
    failed = [rank for rank, proc in enumerate(procs) if proc.returncode]
    if failed:
        raise SystemExit(f"memprobe: {noun(len(failed), 'rank')} {failed} failed")
    return {"ranks": [json.loads(text.strip().splitlines()[-1]) for text in outputs]}

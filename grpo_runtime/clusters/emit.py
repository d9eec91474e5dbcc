"""`grpo launch --emit skypilot|dstack|kubernetes FILE`: a scheduler's task or manifest from the validated config.

The shape comes from the config, as for `grpo launch --slurm` (grpo_runtime.clusters.slurm.layout): training nodes
and processes per node from `num_machines` / `num_processes` and the declared `hardware:` (NODESxGPUSxACCELERATOR),
the accelerator type from `hardware:`, one extra node for `trl vllm-serve` when the config generates through a
server it does not name. Every training node runs `grpo launch` as one accelerate machine (machine rank = the
node's rank, the rank-0 node's address and the config's main_process_port as the rendezvous). Checkpoints go to
output_dir on a mounted volume; a restarted task goes on from the newest complete checkpoint found there.
The config is validated at the emitted world size before anything is printed; nothing is submitted.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

import yaml

from grpo_runtime.clusters.slurm.layout import Layout, LayoutError, plan_layout, wants_vllm_server
from grpo_runtime.clusters.specs.cloud import dstack, skypilot
from grpo_runtime.clusters.specs.job import Job
from grpo_runtime.clusters.specs.kubernetes import kubernetes
from grpo_schema.commands.options import add_overrides

TARGETS = ("skypilot", "dstack", "kubernetes")
K8S_FORMS = ("pytorchjob", "trainjob", "jobset", "indexed-job")
# Scheduler names of the accelerators in grpo-config's catalogue (family before the memory size).
_GPU_NAMES = {"H100-PCIE": "H100", "H100-NVL": "H100-NVL", "RTX6000-ADA": "RTX6000-Ada", "A6000": "RTXA6000"}


def emit_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grpo launch --emit", description="Print a scheduler's task or manifest for a validated run."
    )
    parser.add_argument("file", help="the run config (YAML or JSON)")
    parser.add_argument("--emit", choices=TARGETS, required=True, help="the scheduler to write for")
    parser.add_argument(
        "--k8s-form",
        choices=K8S_FORMS,
        default="pytorchjob",
        help="the Kubernetes object (default pytorchjob: Kubeflow's PyTorchJob)",
    )
    add_overrides(parser)
    parser.add_argument("--allow-env", dest="allow_env", action="append", default=[], metavar="NAME")
    parser.add_argument("--nodes", type=int, help="training nodes (default: from num_machines / hardware:)")
    parser.add_argument("--gpus-per-node", type=int, help="GPUs per node (default: from hardware:)")
    parser.add_argument(
        "--hardware",
        metavar="SPEC",
        help="the nodes and GPUs to write for, as hardware: says them (e.g. 2x8xH100-80GB); default: the config's",
    )
    parser.add_argument(
        "--image",
        default="nvcr.io/nvidia/pytorch:24.10-py3",
        help="container image (dstack, Kubernetes; SkyPilot runs on the cloud's image)",
    )
    parser.add_argument("--name", help="the job's name (default grpo-CONFIG)")
    parser.add_argument(
        "--volume",
        default="grpo-checkpoints",
        help="the checkpoint volume (name of a SkyPilot/dstack volume or a Kubernetes PVC)",
    )
    parser.add_argument("--output", "-o", help="write the spec to this file instead of printing it")
    return parser


def hardware_of(raw: Any, given: str | None = None) -> tuple[int, int, str | None]:
    """(nodes, GPUs per node, scheduler accelerator name) from `given` (--hardware) or the config's `hardware:`;
    (0, 0, None) if absent."""
    from grpo_schema.engine.hardware.accelerators import HardwareError, parse_hardware

    spec = given or (raw.get("hardware") if isinstance(raw, dict) else None)
    if isinstance(spec, dict):
        spec = spec.get("spec") or spec.get("gpus")
    if not isinstance(spec, str):
        return 0, 0, None
    try:
        hardware = parse_hardware(spec)
    except HardwareError as error:
        if given:  # the config's own hardware: is judged by the validator; a typed one is refused here
            raise LayoutError(f"--hardware {given!r}: {error}") from error
        return 0, 0, None
    if hardware.accelerator.peak_tflops is None:  # a plain memory size names no GPU type
        return hardware.nodes, hardware.gpus_per_node, None
    family = hardware.accelerator.name.upper().rpartition("-")[0] or hardware.accelerator.name
    return hardware.nodes, hardware.gpus_per_node, _GPU_NAMES.get(family, family)


def plan(
    declared, nodes: int | None, gpus_per_node: int | None, hardware: str | None = None
) -> tuple[Layout, str | None]:
    hw_nodes, hw_gpus, accelerator = hardware_of(declared.raw, hardware)
    gpus = gpus_per_node if gpus_per_node is not None else hw_gpus
    server = wants_vllm_server(declared.config)
    launch = dict(declared.launch)
    if nodes is None and not launch.get("num_machines"):
        world = launch.get("num_processes")
        if world and gpus:
            nodes = max(world // gpus, 1)
        elif hw_nodes:
            nodes = max(hw_nodes - (1 if server and hw_nodes > 1 else 0), 1)
    if launch.get("num_processes") and gpus and nodes and launch["num_processes"] < nodes * gpus:
        processes = launch["num_processes"] // nodes  # fewer processes than GPUs: the rest serve vLLM (colocate TP)
        return plan_layout(
            launch, nodes=nodes, processes_per_node=processes, gpus_per_node=gpus, vllm_server=server
        ), accelerator
    return plan_layout(launch, nodes=nodes, gpus_per_node=gpus or 0, vllm_server=server), accelerator


class _Dumper(yaml.SafeDumper):
    """YAML as people write these files: every object spelled out (no &anchors), scripts as literal blocks."""

    def ignore_aliases(self, data) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, value: str):
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _text)


def emit(args, result, layout: Layout, accelerator: str | None) -> str:
    job = Job(args, result, layout, accelerator)
    if args.emit == "skypilot":
        return yaml.dump(skypilot(job), Dumper=_Dumper, sort_keys=False, width=120)
    if args.emit == "dstack":
        return yaml.dump(dstack(job), Dumper=_Dumper, sort_keys=False, width=120)
    return yaml.dump_all(kubernetes(job), Dumper=_Dumper, sort_keys=False, width=120)


def emit_command(argv: list[str]) -> int:
    args = emit_parser().parse_args(argv)
    from grpo_runtime.launch.checking import check
    from grpo_schema import check_file

    try:
        declared = check_file(args.file, overrides=args.overrides or None, allow_env=args.allow_env)
    except OSError as error:
        print(f"grpo: cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    try:
        layout, accelerator = plan(declared, args.nodes, args.gpus_per_node, args.hardware)
    except LayoutError as error:
        print(f"grpo launch --emit: error: {error}", file=sys.stderr)
        return 2
    with contextlib.redirect_stdout(sys.stderr):  # the check's report: stdout is the spec, for a pipe or a file
        result = check(args.file, args.overrides, layout.world_size, args.allow_env)
    if isinstance(result, int):
        return result
    text = emit(args, result, layout, accelerator)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"grpo: wrote {args.output} ({args.emit}: {layout.describe()})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0

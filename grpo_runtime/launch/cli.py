"""`grpo train`, `grpo launch` and `grpo demo`: the runtime side of the `grpo` command.

The `grpo` console script (grpo_schema.cli) dispatches here lazily, so validating configs never imports torch.
Each function takes the arguments after the command name and returns an exit code:

  0 success (or, with --dry-run, the run would start)
  1 the config is invalid (diagnostics printed)
  2 bad usage, or the file cannot be read
  3 the config is valid but grpo_runtime cannot run it as written (coded GRPO-U diagnostics, before anything loads)
  4 the run failed while running
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from grpo_runtime.launch.checking import (
    EXIT_CANNOT_RUN,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    apply_env,
    check,
    release_of,
    runnable,
    warn_release_behaviour,
)
from grpo_runtime.launch.process import (
    default_launch_args,
    launch_arguments,
    quiet_library_progress_bars,
    quiet_unused_kernel_notice,
)
from grpo_schema.commands.options import add_overrides, add_profiles, add_world_size
from grpo_schema.engine.words import plural


def _config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the run config (YAML or JSON, as `trl grpo --config` reads it)")
    add_overrides(parser)
    parser.add_argument(
        "--allow-env",
        dest="allow_env",
        action="append",
        default=[],
        metavar="NAME",
        help="allow an env: variable that is refused by default (LD_PRELOAD, *_TOKEN, ...)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and say whether grpo_runtime can run the config as written; load nothing",
    )
    add_profiles(
        parser, help="a training script's profile (e.g. open-r1): its keys are validated and honoured", dest="profiles"
    )
    parser.add_argument(
        "--stop-on-fatal",
        action="store_true",
        help="stop the run after the step where a fatal run-health finding (a NaN loss) appears",
    )


def stop_on_fatal(args) -> None:
    """Every process of the run reads it from the environment (grpo_runtime.outputs.health)."""
    if args.stop_on_fatal:
        from grpo_runtime.outputs.health import STOP_ENV

        os.environ[STOP_ENV] = "1"


def train_command(argv: list[str], prog: str = "grpo train") -> int:
    """grpo train FILE [--set KEY=VALUE]... [--dry-run]: train in this interpreter. Under `grpo launch`, each
    process runs this too (as `python -m grpo_runtime`), validating at the launch's world size; otherwise
    the file's num_processes is the world size checked, and more than one is refused with the command to run."""
    parser = argparse.ArgumentParser(prog=prog)
    _config_arguments(parser)
    add_world_size(parser, help="must equal the number of processes actually running (1 for grpo train)")
    args = parser.parse_args(argv)
    stop_on_fatal(args)
    launched = "WORLD_SIZE" in os.environ
    running = int(os.environ.get("WORLD_SIZE", "1"))
    if args.world_size is not None and args.world_size != running:
        print(
            f"{prog}: --world-size {args.world_size} but {plural(running, 'process')} "
            f"{'is' if running == 1 else 'are'} running; "
            f"use `grpo launch FILE --num-processes {args.world_size}` for a multi-process run",
            file=sys.stderr,
        )
        return EXIT_USAGE
    release = release_of(args.file, prog)
    if isinstance(release, int):
        return release
    result = check(
        args.file,
        args.overrides,
        running if launched or args.world_size else None,
        args.allow_env,
        args.profiles,
        dry_run=args.dry_run,
        release=release,
    )
    if isinstance(result, int):
        return result
    warn_release_behaviour(args.file, release, result.profile_args, prog)
    repeat = [item for value in args.overrides for item in ("--set", value)]
    repeat += [item for name in args.allow_env for item in ("--allow-env", name)]
    repeat += [item for name in args.profiles or list(result.profile_args) for item in ("--profile", name)]
    stopped = runnable(result, "train", prog, args.dry_run, repeat)
    if stopped is not None:
        return stopped
    apply_env(result.env)
    return run_training(result, prog)


def run_training(result, prog: str) -> int:
    """train.main on the checked config: exit 3 for what only loading reveals (a resume target that is not a
    checkpoint, a dense model given router_aux_loss_coef, ...), 4 with the traceback for a failure."""
    from grpo_runtime.generation.backend import GenerationError
    from grpo_runtime.outputs.checkpoint import CheckpointError
    from grpo_runtime.outputs.hub import PushFailed
    from grpo_runtime.support import CannotRun, script_of

    quiet_library_progress_bars()
    quiet_unused_kernel_notice(result.config)
    try:
        from grpo_runtime.train import main

        main(result.config, result.plan, assessed=True, launch=result.launch, script=script_of(result))
    except (CannotRun, CheckpointError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    except (PushFailed, GenerationError) as exc:  # a failed final push (saved locally first), a lost vLLM server
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except Exception:  # a failed run: the traceback is the report
        import traceback

        traceback.print_exc()
        print(f"{prog}: the run failed (see the traceback above)", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def launch_command(argv: list[str]) -> int:
    """grpo launch FILE [--num-processes N] [--set K=V]... [--dry-run] [ACCELERATE ARGS]: validate at world size N
    (default: num_processes from the file, else 1), export `env:`, then `accelerate launch` N copies of
    `python -m grpo_runtime FILE` (they inherit the env). The file's launch keys (num_machines,
    main_process_ip, ...) become accelerate flags; flags on the command line win."""
    if any(item == "--emit" or item.startswith("--emit=") for item in argv):  # print a scheduler's spec
        from grpo_runtime.clusters.emit import emit_command

        return emit_command(argv)
    from grpo_runtime.clusters.backends import chosen

    cluster = chosen(argv)  # --slurm, --ray ADDRESS: a job of that cluster instead (grpo_runtime.clusters)
    if cluster is not None:
        return cluster.launch(argv)
    parser = argparse.ArgumentParser(prog="grpo launch")
    _config_arguments(parser)
    parser.add_argument("--num-processes", "--num_processes", dest="num_processes", type=int, default=None)
    parser.add_argument(
        "--slurm", action="store_true", help="submit to Slurm instead; options: grpo launch FILE --slurm --help"
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="submit a Ray job to the cluster at ADDRESS instead (e.g. "
        "http://head:8265); options: grpo launch FILE --ray ADDRESS --help",
    )
    parser.add_argument(
        "--emit",
        metavar="SCHEDULER",
        help="print a scheduler's task or manifest for the run "
        "instead of starting it; options: grpo launch FILE --emit SCHEDULER --help",
    )
    args, accelerate_args = parser.parse_known_args(argv)
    stop_on_fatal(args)
    overrides = list(args.overrides)
    if args.num_processes is not None and file_processes(args.file) not in (None, args.num_processes):
        overrides.append(f"num_processes={args.num_processes}")  # the command line wins, in every process too
    release = release_of(args.file, "grpo launch")
    if isinstance(release, int):
        return release
    result = check(
        args.file, overrides, args.num_processes, args.allow_env, args.profiles, dry_run=args.dry_run, release=release
    )
    if isinstance(result, int):
        return result
    warn_release_behaviour(args.file, release, result.profile_args, "grpo launch")
    stopped = runnable(result, "launch", "grpo launch", args.dry_run)
    if stopped is not None:
        return stopped
    apply_env(result.env)
    processes = result.world_size
    from_file = launch_arguments(result.launch, accelerate_args)
    from grpo_runtime.distributed.accelerate import launch_mode, offloads_optimizer, prebuild_deepspeed_ops

    if result.config.deepspeed or launch_mode(result.launch) == "DEEPSPEED" or "--use_deepspeed" in accelerate_args:
        # once, before the processes start: several building it at once can break it
        prebuild_deepspeed_ops(cpu_adam=offloads_optimizer(result.config, [*from_file, *accelerate_args]))
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--num_processes",
        str(processes),
        *from_file,
        *default_launch_args([*from_file, *accelerate_args], processes, result.config),
        *accelerate_args,
        "-m",
        "grpo_runtime",
        args.file,
    ]
    for override in overrides:
        command += ["--set", override]
    for name in args.allow_env:  # every process re-validates the file: it needs the same allowances
        command += ["--allow-env", name]
    for name in args.profiles or list(result.profile_args):  # as given, or as found (written_for_a_profile)
        command += ["--profile", name]
    code = subprocess.call(command)
    if code in (EXIT_OK, EXIT_CANNOT_RUN):
        return code
    print(f"grpo launch: the run failed (accelerate launch exited with {code})", file=sys.stderr)
    return EXIT_FAILED


def file_processes(path: str):
    """num_processes as the file writes it (None when absent or unreadable: validation reports that), read with
    the validator's bounded loader."""
    from grpo_schema.engine.loader import load_yaml

    try:
        with open(path, "rb") as handle:
            loaded = load_yaml(handle.read())
    except OSError:
        return None
    return loaded.data.get("num_processes") if loaded.ok and isinstance(loaded.data, dict) else None


def demo_command(argv: list[str]) -> int:
    """grpo demo DIR [--vllm]: write a tiny offline model, prompts and DIR/config.yaml."""
    parser = argparse.ArgumentParser(prog="grpo demo")
    parser.add_argument("directory")
    parser.add_argument(
        "--vllm",
        action="store_true",
        help="a vLLM-compatible model (head size 64) and a config that generates with a colocated "
        "vLLM engine (needs the `vllm` extra)",
    )
    args = parser.parse_args(argv)
    from grpo_runtime.launch.demo import write_demo

    config_path = write_demo(args.directory, vllm=args.vllm)
    print(f"wrote {config_path}\nrun it with:  grpo train {config_path}")
    return 0

"""`grpo train`, `grpo launch` and `grpo demo`: the runtime side of the `grpo` command.

The `grpo` console script (grpo_schema.cli) dispatches here lazily, so validating configs never imports torch.
Each function takes the arguments after the command name and returns an exit code:
0 success, 1 the config is invalid (diagnostics printed), 2 bad usage or a failed run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys


def _config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the run config (YAML or JSON, as `trl grpo --config` reads it)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one key of the file (repeatable)")
    parser.add_argument("--allow-env", dest="allow_env", action="append", default=[], metavar="NAME",
                        help="allow an env: variable that is refused by default (LD_PRELOAD, *_TOKEN, ...)")


def report(result) -> None:
    """Print the diagnostics with the schema's text renderer (errors to stderr), as `grpo validate` does."""
    from pathlib import Path

    from grpo_schema.render.text import render

    stream = sys.stdout if result.valid else sys.stderr
    source = Path(result.path).read_text(encoding="utf-8", errors="replace")
    stream.write(render([result], {result.path: source}, stream))


def check(path: str, overrides: list[str], world_size: int, allow_env: list[str] = ()):
    """Validate `path` at `world_size` and print its diagnostics. Returns the CheckResult, or an exit code:
    1 when the config is invalid, 2 when it cannot be read."""
    from grpo_schema import check_file

    try:
        result = check_file(path, world_size=world_size, overrides=overrides or None, allow_env=allow_env)
    except OSError as error:
        print(f"grpo: cannot read {path}: {error}", file=sys.stderr)
        return 2
    if result.diagnostics or not result.valid:
        report(result)
    if not result.valid or result.plan is None:
        print(f"grpo: {path} is not a valid config for {world_size} process(es); nothing was run", file=sys.stderr)
        return 1
    return result


def apply_env(env: dict[str, str]) -> None:
    """The validated `env:` section, exported before anything reads it (overwrites the shell, like TRL)."""
    for name, value in env.items():
        os.environ[name] = str(value)


def validated(argv: list[str], prog: str, allow_world_size: bool = True):
    """Parse `FILE [--set K=V]... [--world-size N]`, validate and apply `env:`. Returns the CheckResult or an
    exit code. The world size is this launch's (WORLD_SIZE under a launcher, else 1)."""
    parser = argparse.ArgumentParser(prog=prog)
    _config_arguments(parser)
    if allow_world_size:
        parser.add_argument("--world-size", type=int, default=None,
                            help="must equal the number of processes actually running (1 for grpo train)")
    args = parser.parse_args(argv)
    running = int(os.environ.get("WORLD_SIZE", "1"))
    if allow_world_size and args.world_size is not None and args.world_size != running:
        print(f"{prog}: --world-size {args.world_size} but {running} process(es) are running; "
              f"use `grpo launch FILE --num-processes {args.world_size}` for a multi-process run", file=sys.stderr)
        return 2
    result = check(args.file, args.overrides, running, args.allow_env)
    if not isinstance(result, int):
        apply_env(result.env)
    return result


def quiet_library_progress_bars() -> None:
    """Loading weights and reading data print their own bars; the run's bar is the one that matters."""
    import datasets
    import transformers

    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()


def train_command(argv: list[str], prog: str = "grpo train") -> int:
    """grpo train FILE [--set KEY=VALUE]... [--world-size N]: train in this interpreter. Under `grpo launch`, each
    process runs this too (as `python -m grpo_runtime.train`), validating at the launch's world size."""
    checked = validated(argv, prog=prog)
    if isinstance(checked, int):
        return checked
    from .checkpoint import CheckpointError
    from .generation import GenerationError
    from .setup import UnsupportedConfig
    from .train import main

    quiet_library_progress_bars()
    try:
        main(checked.config, checked.plan)
    except (CheckpointError, GenerationError, UnsupportedConfig) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0


def launch_command(argv: list[str]) -> int:
    """grpo launch FILE --num-processes N [--set K=V]... [ACCELERATE ARGS]: validate at world size N, export
    `env:`, then `accelerate launch` N copies of `python -m grpo_runtime.train FILE` (they inherit the env)."""
    parser = argparse.ArgumentParser(prog="grpo launch")
    _config_arguments(parser)
    parser.add_argument("--num-processes", "--num_processes", dest="num_processes", type=int, required=True)
    args, accelerate_args = parser.parse_known_args(argv)
    result = check(args.file, args.overrides, args.num_processes, args.allow_env)
    if isinstance(result, int):
        return result
    apply_env(result.env)
    command = [sys.executable, "-m", "accelerate.commands.launch", "--num_processes", str(args.num_processes),
               *default_launch_args(accelerate_args, args.num_processes, result.config), *accelerate_args,
               "-m", "grpo_runtime.train", args.file]
    for override in args.overrides:
        command += ["--set", override]
    for name in args.allow_env:  # every process re-validates the file: it needs the same allowances
        command += ["--allow-env", name]
    return subprocess.call(command)


def default_launch_args(accelerate_args: list[str], num_processes: int, config) -> list[str]:
    """Launcher flags the user did not give: the config's mixed precision and, for several processes without an
    accelerate config file, accelerate's multi-process launcher (torchrun). Despite its name, `--multi_gpu` is
    the flag that selects it; on a machine without GPUs the processes use the CPU and the gloo backend."""
    from .precision import mixed_precision

    given = " ".join(accelerate_args)
    if "--config_file" in given:  # the user's accelerate config decides everything
        return []
    defaults = {"--num_machines": "1", "--dynamo_backend": "no", "--mixed_precision": mixed_precision(config)}
    extra = [item for flag, value in defaults.items() if flag not in given for item in (flag, value)]
    modes = ("--multi_gpu", "--use_deepspeed", "--use_fsdp", "--cpu", "--tpu")
    if num_processes > 1 and not any(mode in given for mode in modes):
        extra.append("--multi_gpu")
    return extra


def demo_command(argv: list[str]) -> int:
    """grpo demo DIR [--vllm]: write a tiny offline model, prompts and DIR/config.yaml."""
    parser = argparse.ArgumentParser(prog="grpo demo")
    parser.add_argument("directory")
    parser.add_argument("--vllm", action="store_true",
                        help="a vLLM-compatible model (head size 64) and a config that generates with a colocated "
                             "vLLM engine (needs the `vllm` extra)")
    args = parser.parse_args(argv)
    from .demo import write_demo

    config_path = write_demo(args.directory, vllm=args.vllm)
    print(f"wrote {config_path}\nrun it with:  grpo train {config_path}")
    return 0

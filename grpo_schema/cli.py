"""The `grpo` command line (interface.md §4): one table of commands, and the dispatch that reads it.

Schema commands run on the slim install; `serve`, `train`, `launch`, `demo`, `smoke`, `ray` and `lsp` import the
service or the runtime only when called, with an install hint when the extra is missing. What the commands share
(exit codes, UsageError, the formatter, the common options) is grpo_schema.commands.options.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

from grpo_schema.commands import codes, schema, validate
from grpo_schema.commands.options import (
    CONFIG_SUFFIXES,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Formatter,
    UsageError,
    split_trl_tokens,
)

__all__ = ["COMMANDS", "CONFIG_SUFFIXES", "EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "UsageError", "build_parser", "main"]


@dataclass(frozen=True)
class Command:
    """A `grpo` command. With `arguments`, this parser reads its options and `run(args, rest)` gets them; without,
    the command reads its own argv (`run(argv)`), wherever its options are."""

    name: str
    help: str
    run: Callable[..., int]
    arguments: Callable[[argparse.ArgumentParser], None] | None = None


def _elsewhere(module: str, function: str, extra: str) -> Callable[[list[str]], int]:
    """A command of another package (the service, the runtime, the language server), imported when it runs: the
    schema install must not load it, and import-linter keeps grpo_schema from importing it by statement."""

    def run(argv: list[str]) -> int:
        import importlib

        try:
            target = getattr(importlib.import_module(module), function)
        except ImportError as exc:
            if not extra:  # part of the base install: a real bug, not a missing extra
                raise
            raise UsageError(f"this command needs the {extra} extra: pip install 'grpo-config[{extra}]' ({exc})")
        return int(target(argv) or 0)

    return run


# The schema's own commands that read their own argv, imported by statement when they run (start-up stays small).
def _explain(argv: list[str]) -> int:
    from grpo_schema.commands.explain import explain_command

    return explain_command(argv)


def _migrate(argv: list[str]) -> int:
    from grpo_schema.commands.migrate import migrate_command

    return migrate_command(argv)


def _export(argv: list[str]) -> int:
    from grpo_schema.commands.pyexport import export_command

    return export_command(argv)


def _convert(argv: list[str]) -> int:
    from grpo_schema.commands.verl import convert_command

    return convert_command(argv)


def _plan(argv: list[str]) -> int:
    from grpo_schema.commands.plan import plan_command

    return plan_command(argv)


def _health(argv: list[str]) -> int:
    from grpo_schema.commands.health import health_command

    return health_command(argv)


def _doctor(argv: list[str]) -> int:
    from grpo_schema.commands.doctor import doctor_command

    return doctor_command(argv)


COMMANDS: tuple[Command, ...] = (
    Command(
        "validate", "check config files and report every problem at once", validate.cmd_validate, validate.add_arguments
    ),
    Command("codes", "list the diagnostic codes, or explain one", codes.cmd_codes, codes.add_arguments),
    Command("schema", "print the JSON Schema of the config", schema.cmd_schema, schema.add_arguments),
    Command("serve", "start the validation service and web form", _elsewhere("grpo_web.serve", "serve_command", "web")),
    Command(
        "train", "train on this machine, one process", _elsewhere("grpo_runtime.launch.cli", "train_command", "runtime")
    ),
    Command(
        "launch",
        "train with accelerate launch, or submit to Slurm or Ray",
        _elsewhere("grpo_runtime.launch.cli", "launch_command", "runtime"),
    ),
    Command("demo", "write a tiny offline demo run", _elsewhere("grpo_runtime.launch.cli", "demo_command", "runtime")),
    Command(
        "smoke",
        "run the first optimizer steps on this CPU, with a checkpoint resumed: does the config get past them",
        _elsewhere("grpo_runtime.smoke.command", "smoke_command", "runtime"),
    ),
    Command(
        "slurm",
        "status, logs, cancel and resume of jobs from `grpo launch --slurm`",
        _elsewhere("grpo_runtime.clusters.slurm.backend", "slurm_command", ""),
    ),
    Command(
        "ray",
        "status, logs, cancel and resume of jobs from `grpo launch --ray`",
        _elsewhere("grpo_runtime.clusters.ray.backend", "ray_command", "ray"),
    ),
    Command("explain", "show the batch schedule, micro-step by micro-step", _explain),
    Command("migrate", "rewrite renamed and removed keys for TRL 1.16", _migrate),
    Command("convert", "write a config in the other dialect (TRL <-> verl), naming what does not carry over", _convert),
    Command("export", "write a GRPOConfig(...) call of a Python script or notebook as a flat YAML config", _export),
    Command("plan", "per-GPU memory and run time on declared hardware: will it fit", _plan),
    Command(
        "health", "judge runs from what they logged: flat groups, bad rewards, clipped completions, NaN, drift", _health
    ),
    Command(
        "doctor",
        "check the environment that will run a config: package versions against its TRL release, "
        "known-bad combinations and the config's features",
        _doctor,
    ),
    Command(
        "lsp",
        "language server over stdio: diagnostics, quick fixes, hover and completion in the editor",
        _elsewhere("grpo_schema.lsp.server", "lsp_command", "lsp"),
    ),
)
BY_NAME = {command.name: command for command in COMMANDS}


def build_parser() -> argparse.ArgumentParser:
    """Every command, for `grpo --help` and for a command name that is not one."""
    parser = argparse.ArgumentParser(
        prog="grpo", description="Validate, explain and run GRPO configs for TRL 1.16.", formatter_class=Formatter
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        own = command.arguments is None  # the command parses its own options (and its own --help)
        child = sub.add_parser(command.name, help=command.help, add_help=not own, formatter_class=Formatter)
        if own:
            child.add_argument("argv", nargs=argparse.REMAINDER)
        else:
            command.arguments(child)
    return parser


def command_parser(command: Command) -> argparse.ArgumentParser:
    """One command's parser alone: `grpo validate` is the command users run most, and building every command's
    options was a tenth of its start-up."""
    parser = argparse.ArgumentParser(prog=f"grpo {command.name}", description=command.help, formatter_class=Formatter)
    if command.arguments is not None:
        command.arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    tokens = list(sys.argv[1:] if argv is None else argv)
    command = BY_NAME.get(tokens[0]) if tokens else None
    if command is None:
        build_parser().parse_args(tokens)  # usage, help or an unknown command: argparse answers and exits
        return EXIT_USAGE
    try:
        if command.arguments is None:
            return command.run(tokens[1:])
        parser, ours, rest = command_parser(command), tokens[1:], []
        if command.name == "validate":  # TRL's own `--key value` form beside our options
            ours, rest = split_trl_tokens(ours, parser)
        return command.run(parser.parse_args(ours), rest)
    except UsageError as exc:
        print(f"grpo {command.name}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `grpo codes | head`
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

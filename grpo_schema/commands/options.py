"""What every `grpo` command shares: exit codes, the usage error, the help formatter and the common options.

One definition of each option and of its check, so `--world-size -3` is refused the same way by every command that
takes it. Below both grpo_schema.cli (the command table) and the commands; grpo_runtime and the service import
UsageError from here. Cheap to import: only argparse, sys, pathlib and trl_release (`grpo validate` start-up).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from grpo_schema.commands.trl_release import add_trl_version, judged_release  # --trl-version lives with its release

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
FORMATS = ("text", "json", "github", "sarif")


class UsageError(Exception):
    """Bad usage or an input that cannot be read: the command prints it and exits 2."""


class Formatter(argparse.HelpFormatter):
    """argparse's formatter, sized from os.get_terminal_size: argparse creates one per add_argument, and its own
    default width comes from shutil, whose import (with bz2 and lzma) cost `grpo validate` more than the check."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, width if width is not None else terminal_width() - 2
        )


def terminal_width() -> int:
    import os

    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def world_size(text: str) -> int:
    """--world-size's type: a whole number from 1 to 2**63-1 (the plan's arithmetic overflows a float past it)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"world size must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"world size must be at least 1, got {value}")
    from grpo_schema.engine.coerce import INT64_MAX

    if value > INT64_MAX:
        raise argparse.ArgumentTypeError(f"world size must be at most {INT64_MAX}, got {text!r}")
    return value


WORLD_SIZE_HELP = (
    "number of training processes over all machines (default: num_processes from the file, else 1); "
    "never probed from this machine"
)
PROFILE_HELP = (
    "accept a downstream project's script keys and reward names (e.g. open-r1); repeatable; "
    "'module:ATTR' imports a Profile"
)


def add_world_size(parser: argparse.ArgumentParser, help: str = WORLD_SIZE_HELP, dest: str = "world_size") -> None:
    parser.add_argument("--world-size", type=world_size, default=None, dest=dest, metavar="N", help=help)


def add_profiles(parser: argparse.ArgumentParser, help: str = PROFILE_HELP, dest: str = "profile") -> None:
    parser.add_argument("--profile", action="append", default=[], metavar="NAME", dest=dest, help=help)


def add_format(parser: argparse.ArgumentParser, choices: Sequence[str] = FORMATS) -> None:
    parser.add_argument("--format", choices=tuple(choices), default="text")


def add_overrides(parser: argparse.ArgumentParser, trl_flags: bool = False) -> None:
    """--set KEY=VALUE (repeatable, into args.overrides): every command that reads a config file takes it.
    `trl_flags`: the command also takes TRL's own `--key value` form, as validate does."""
    also = "; TRL's own --key value form works too" if trl_flags else ""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="overrides",
        help=f"override a key of the file (repeatable; VALUE is read as YAML){also}",
    )


def add_check_options(parser: argparse.ArgumentParser) -> None:
    """The options of a command that checks a config as `grpo validate` does (read by check_options)."""
    add_world_size(parser)
    add_profiles(parser)
    add_overrides(parser, trl_flags=True)
    parser.add_argument(
        "--allow-env",
        action="append",
        default=[],
        metavar="NAME",
        help="allow an env: variable that is refused by default (LD_PRELOAD, *_TOKEN, ...)",
    )
    add_trl_version(parser)
    parser.add_argument(
        "--dialect",
        choices=("trl", "verl"),
        default=None,
        help="read the file as TRL's YAML or as a verl launch script / YAML (default: by content)",
    )
    parser.add_argument(
        "--verl-version",
        default=None,
        metavar="X.Y[.Z]",
        help="the verl release a verl file is judged at (default: its `# grpo: --verl-version` "
        "comment or verl==X pin, else the newest known)",
    )


def check_options(args: argparse.Namespace, extra_overrides: list) -> dict:
    """The engine's options (world_size, profiles, overrides, allow_env) from add_check_options' arguments."""
    from grpo_schema.engine.check_input import Override

    try:
        overrides = [Override.parse(text) for text in args.overrides] + extra_overrides
    except ValueError as exc:
        raise UsageError(f"--set: {exc}") from None
    return {
        "world_size": args.world_size,
        "profiles": chosen_profiles(args.profile),
        "overrides": overrides,
        "allow_env": args.allow_env,
    }


def chosen_profiles(names: list[str]) -> tuple:
    """The profiles --profile names, or a UsageError listing the known ones."""
    from grpo_schema.engine.check import resolve_profiles
    from grpo_schema.engine.profiles import known_profiles

    try:
        return resolve_profiles(names, allow_import=True)
    except (KeyError, ImportError, AttributeError) as exc:
        known = ", ".join(sorted(known_profiles()))
        raise UsageError(f"unknown profile {exc}; known profiles: {known} (or 'module:ATTR')") from None


def trl_options(flag: str | None, path: str | None) -> dict:
    """trl_version and where it came from for a config at `path` (grpo_schema.commands.trl_release), or a
    UsageError naming the supported range."""
    try:
        return judged_release(flag, path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def expand_paths(paths: Sequence[str], python: bool = False) -> list[str]:
    """Files as given, directories as the config files under them, '-' for stdin; a missing path is a UsageError.
    With `python`, a directory's .py scripts and .ipynb notebooks too, outside installed packages (walked_python)."""
    out: list[str] = []
    for raw in paths:
        path = Path(raw)
        if raw == "-":
            out.append(raw)
        elif path.is_dir():
            out.extend(
                sorted(
                    str(p)
                    for p in path.rglob("*")
                    if p.is_file() and (p.suffix in CONFIG_SUFFIXES or (python and walked_python(p, path)))
                )
            )
        elif path.is_file():
            out.append(raw)
        else:
            raise UsageError(f"cannot read {raw}: no such file or directory")
    return out


PYTHON_SUFFIXES = (".py", ".ipynb")
# Folders of installed or generated code, not the user's: their Python files are left out of a directory walk.
NOT_WALKED = frozenset({"site-packages", "node_modules", "__pycache__", ".ipynb_checkpoints"})


def walked_python(path: Path, root: Path) -> bool:
    """A script or notebook of the user's under `root`: not in a hidden folder (.venv, .git, .tox) or an installed
    package's folder, where the GRPOConfig calls are TRL's own or a checkpoint's copy."""
    if path.suffix not in PYTHON_SUFFIXES:
        return False
    parts = path.relative_to(root).parts[:-1]
    return not any(part.startswith(".") or part in NOT_WALKED for part in parts)


def read_config(path: str) -> bytes:
    """The bytes of a config file, or of stdin for '-'; an unreadable file is a UsageError."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def split_trl_tokens(argv: list[str], parser: argparse.ArgumentParser) -> tuple[list[str], list[str]]:
    """Separate the parser's own options and the paths from TRL-style `--key value...` tokens (kept in order).
    Which options take a value is read from the parser, so a new option needs no list kept by hand."""
    actions = parser._option_string_actions  # argparse's own map of option strings to their actions
    ours: list[str] = []
    trl: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        action = actions.get(token.split("=", 1)[0])
        if action is not None and action.nargs != 0:
            take = 1 if "=" in token else 2
            ours += argv[i : i + take]
            i += take
        elif action is not None or not token.startswith("--") or token == "--":
            ours.append(token)
            i += 1
        else:
            trl.append(token)
            i += 1
            while i < len(argv) and not argv[i].startswith("--") and "=" not in token:
                trl.append(argv[i])
                i += 1
    return ours, trl

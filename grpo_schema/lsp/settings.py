"""What a document is checked against: world size, profiles, hardware and allowed env variables.

Three sources, the most specific winning: a `# grpo:` comment in the file, then the editor's settings
(`initializationOptions` or `workspace/didChangeConfiguration`, under a `grpo` section), then the file's own
`num_processes` (which `check_text` reads when no world size is given). The comment takes the command-line options
of `grpo validate`, so a file says how it is meant to be checked:

    # grpo: --world-size 8 --profile open-r1 --hardware 8xH100-80GB

It may stand on any line that is only a comment; several such lines add up. A bad option is reported as a
diagnostic on that line (GRPO-Y... codes stay the loader's; these use the `grpo:` comment's own message).
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any

COMMENT = re.compile(r"^\s*#\s*grpo:(?P<args>.*)$")
DEFAULT_DEBOUNCE_MS = 10


@dataclass(frozen=True)
class Settings:
    world_size: int | None = None
    profiles: tuple[str, ...] = ()
    hardware: str | None = None
    allow_env: tuple[str, ...] = ()
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    world_size_from: str = ""  # where the world size was declared, for the hover text


@dataclass(frozen=True)
class CommentProblem:
    line: int  # 0-based
    message: str


@dataclass(frozen=True)
class FileSettings:
    settings: Settings
    problems: tuple[CommentProblem, ...] = ()
    lines: tuple[int, ...] = field(default=())  # 0-based lines holding a `# grpo:` comment


def from_client(options: Any, base: Settings | None = None) -> Settings:
    """Settings from the client's JSON: {"grpo": {...}} or the section itself. Unknown or ill-typed keys are
    ignored (an editor's settings UI is not the place to fail)."""
    base = base or Settings()
    if not isinstance(options, dict):
        return base
    section = options.get("grpo", options)
    if not isinstance(section, dict):
        return base
    out = base
    world = section.get("worldSize", section.get("world_size"))
    if isinstance(world, int) and not isinstance(world, bool) and world >= 1:
        out = replace(out, world_size=world, world_size_from="the editor's settings")
    elif world is None and ("worldSize" in section or "world_size" in section):
        out = replace(out, world_size=None, world_size_from="")
    profiles = section.get("profiles", section.get("profile"))
    if isinstance(profiles, str):
        profiles = [profiles]
    if isinstance(profiles, list) and all(isinstance(p, str) for p in profiles):
        out = replace(out, profiles=tuple(profiles))
    hardware = section.get("hardware")
    if (hardware is None or isinstance(hardware, str)) and "hardware" in section:
        out = replace(out, hardware=hardware or None)
        if hardware and out.world_size is None:
            out = replace(out, world_size_from=f"the GPUs of the hardware setting {hardware}")
    allow_env = section.get("allowEnv", section.get("allow_env"))
    if isinstance(allow_env, list) and all(isinstance(p, str) for p in allow_env):
        out = replace(out, allow_env=tuple(allow_env))
    debounce = section.get("debounceMs")
    if isinstance(debounce, int) and not isinstance(debounce, bool) and 0 <= debounce <= 5_000:
        out = replace(out, debounce_ms=debounce)
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # raise instead of printing and exiting
        raise ValueError(message)


def _parser() -> _Parser:
    parser = _Parser(prog="# grpo:", add_help=False)
    parser.add_argument("--world-size", type=int)
    parser.add_argument("--profile", action="append", default=[])
    parser.add_argument("--hardware")
    parser.add_argument("--allow-env", action="append", default=[])
    return parser


def from_text(text: str, base: Settings) -> FileSettings:
    """`base` with every `# grpo:` comment of the file applied over it."""
    out, problems, lines = base, [], []
    parser = _parser()
    for number, line in enumerate(text.splitlines()):
        if "grpo:" not in line:
            continue
        match = COMMENT.match(line)
        if not match:
            continue
        lines.append(number)
        try:
            args = parser.parse_args(shlex.split(match["args"]))
        except ValueError as exc:
            problems.append(CommentProblem(number, f"`# grpo:` comment: {exc}"))
            continue
        if args.world_size is not None:
            if args.world_size < 1:
                problems.append(CommentProblem(number, "`# grpo:` comment: --world-size must be at least 1"))
            else:
                out = replace(out, world_size=args.world_size, world_size_from=f"`# grpo:` comment, line {number + 1}")
        if args.profile:
            out = replace(out, profiles=tuple(args.profile))
        if args.hardware:
            out = replace(out, hardware=args.hardware)
            if out.world_size is None:  # the check derives it from the GPUs declared
                out = replace(out, world_size_from=f"the GPUs of `--hardware {args.hardware}`")
        if args.allow_env:
            out = replace(out, allow_env=out.allow_env + tuple(args.allow_env))
    return FileSettings(out, tuple(problems), tuple(lines))

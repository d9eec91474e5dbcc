"""In-file settings: how a file says it is meant to be checked, in a `# grpo:` comment.

    # grpo: --world-size 8 --profile open-r1 --hardware 8xH100-80GB --allow-env HF_TOKEN --trl-version 0.19

The comment takes `grpo validate`'s own options. It may stand on any line that is only a comment at the top level
of the document (`comment_lines`): not inside a block scalar (a `run: |` script that prints `# grpo:` is text, not a
comment) nor under a nested key (a workflow step's comment says nothing about the file). Several such lines add up (a later --world-size or --profile replaces an earlier one, --allow-env names accumulate). Every
surface reads it through this module, via `check_text` (the CLI, the service, the form and the language server),
so they all check a file at the same world size:

    command-line flag / query parameter  >  `# grpo:` comment  >  num_processes in the file  >  1

and likewise for the TRL release (`judged_release`, the one place that orders it):

    a choice for this one check (`--trl-version`, `?trl_version=` and the form's picker, a validation context)
      >  `# grpo: --trl-version` comment  >  a standing default (the editor's trlVersion, `grpo lsp --trl-version`,
      `grpo serve --trl-version`)  >  the installed trl  >  a repository pin  >  1.16

The comment describes the file and travels with it, so it outranks any default set for a whole editor or service
(which cannot know each file, as the editor's worldSize yields to the file's); a flag is asked for the one check
it is given to ("how does this file fare on 0.19?"), so it outranks the comment.

`with_file_settings` puts the comment's values under the caller's explicit options; what it cannot read is kept
as a `Problem` (reported by the check as GRPO-Y015 on that line). Nothing here resolves a profile or imports
anything: a comment names registered profiles only.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass
from typing import Any, Iterator

from grpo_schema.engine.lines import split_lines

COMMENT = re.compile(r"^\s*#\s*grpo:(?P<args>.*)$")
# A line (its comment cut off) that opens a block scalar: `key: |`, `- >-`, `key: !!str |2`.
_BLOCK_SCALAR = re.compile(r"(?:^|:\s+|(?:^|\s)-\s+)(?:!\S*\s+)?[|>][-+0-9]{0,2}$")
# Where result.sources["world_size"] says a world size came from, when not from num_processes ("file").
FROM_COMMENT = "comment"
OPTIONS_HELP = "the comment takes --world-size N, --profile NAME, --hardware SPEC, --allow-env NAME, --trl-version X.Y"


# Release sources a `# grpo: --trl-version` comment yields to: choices made for the one check (every other source,
# a standing default or what was detected, yields to the comment).
CHOSEN_FOR_THE_CHECK = ("flag", "context", "form")


@dataclass(frozen=True)
class Problem:
    line: int  # 1-based
    message: str


@dataclass(frozen=True)
class FileSettings:
    world_size: int | None = None
    world_size_line: int | None = None  # 1-based line of the comment that set it
    profiles: tuple[str, ...] = ()
    profiles_line: int | None = None
    hardware: str | None = None
    hardware_line: int | None = None
    allow_env: tuple[str, ...] = ()
    trl_version: str | None = None
    lines: tuple[int, ...] = ()  # 1-based lines holding a `# grpo:` comment
    problems: tuple[Problem, ...] = ()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # raise instead of printing and exiting
        raise ValueError(message)


def _parser() -> _Parser:
    parser = _Parser(prog="# grpo:", add_help=False, allow_abbrev=False)
    parser.add_argument("--world-size", type=int)
    parser.add_argument("--profile", action="append", default=[])
    parser.add_argument("--hardware")
    parser.add_argument("--allow-env", action="append", default=[])
    parser.add_argument("--trl-version")
    return parser


def comment_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line, line) of every whole-line comment at the top level of the document: at column 0, or indented
    where the last content line is a top-level key with its value on that line. A line inside a block scalar is
    its text, and a comment under a nested key (a workflow step) belongs to that key: neither is yielded."""
    block_indent: int | None = None  # the indentation of the line that opened the block scalar we are in
    nested = False  # the last content line is indented, or a top-level key whose value is a nested block
    for number, line in enumerate(split_lines(text), start=1):
        stripped = line.lstrip(" \t")
        indent = len(line) - len(stripped)
        if block_indent is not None:
            if not stripped or indent > block_indent:
                continue
            block_indent = None
        if not stripped:
            continue
        if stripped.startswith("#"):
            if indent == 0 or not nested:
                yield number, line
            continue
        content = stripped.split(" #", 1)[0].rstrip()
        nested = indent > 0 or content.endswith(":")
        if _BLOCK_SCALAR.search(content):
            block_indent = indent


def read_file_settings(text: str | bytes) -> FileSettings:
    """Every `# grpo:` comment of the file (a top-level comment line, `comment_lines`), applied in order."""
    if isinstance(text, bytes):
        if b"grpo:" not in text:
            return FileSettings()
        text = text.decode("utf-8", "replace")
    if "grpo:" not in text:
        return FileSettings()
    values: dict[str, Any] = {"allow_env": (), "lines": (), "problems": ()}
    parser = _parser()
    for number, line in comment_lines(text):
        if "grpo:" not in line:
            continue
        match = COMMENT.match(line)
        if not match:
            continue
        values["lines"] += (number,)
        try:
            args = parser.parse_args(shlex.split(match["args"]))
        except ValueError as exc:
            values["problems"] += (Problem(number, f"`# grpo:` comment: {exc}"),)
            continue
        if args.world_size is not None:
            if args.world_size < 1:
                values["problems"] += (Problem(number, "`# grpo:` comment: --world-size must be at least 1"),)
            else:
                values.update(world_size=args.world_size, world_size_line=number)
        if args.profile:
            values.update(profiles=tuple(args.profile), profiles_line=number)
        if args.hardware:
            values.update(hardware=args.hardware, hardware_line=number)
        values["allow_env"] += tuple(args.allow_env)
        if args.trl_version:
            from grpo_schema.versions import VersionError, parse_version

            try:
                parse_version(args.trl_version)
            except VersionError as exc:
                values["problems"] += (Problem(number, f"`# grpo:` comment: --trl-version: {exc}"),)
            else:
                values["trl_version"] = args.trl_version
    return FileSettings(**values)


def with_file_settings(settings: FileSettings, options: dict[str, Any]) -> dict[str, Any]:
    """`options` (check_text's keyword arguments) with the file's settings under them: an explicit world size or
    profile list wins; allowed env names add up. Applying it twice changes nothing."""
    out = dict(options)
    if out.get("world_size") is None and settings.world_size is not None:
        out["world_size"] = settings.world_size
        out["world_size_source"] = FROM_COMMENT
    if not out.get("profiles") and settings.profiles:
        out["profiles"] = settings.profiles
        out["profiles_from_comment"] = True
    if settings.trl_version:
        out.update(judged_release(settings.trl_version, out.get("trl_version"), out.get("trl_version_source")))
    if settings.allow_env:
        given = tuple(out.get("allow_env") or ())
        out["allow_env"] = given + tuple(name for name in settings.allow_env if name not in given)
    return out


def judged_release(
    comment: str | None, given: str | None = None, given_source: str | None = None, path: str | None = None
) -> dict[str, str]:
    """{"trl_version", "trl_version_source"} a check judges by, for every surface (module docstring): `given` when
    chosen for this check (its source in CHOSEN_FOR_THE_CHECK), else the file's `comment`, else `given` (a standing
    default: "editor settings", "service settings", or what a caller detected), else the installed trl, a pin in
    the repository of `path`, or 1.16. Versions are taken as valid (each surface refuses a bad one in its way)."""
    if given and given_source in CHOSEN_FOR_THE_CHECK:
        return {"trl_version": given, "trl_version_source": given_source}
    if comment:
        return {"trl_version": comment, "trl_version_source": FROM_COMMENT}
    if given:
        return {"trl_version": given, "trl_version_source": given_source or "default"}
    from grpo_schema.versions import default_version

    found = default_version(path)
    return {"trl_version": found.version, "trl_version_source": found.source}

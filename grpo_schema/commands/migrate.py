"""`grpo migrate FILE... [--from A] [--to 1.16] [--write]`: rewrite a config for TRL 1.16, keeping what it did.

Applies the edit of every migration in grpo_schema.engine.migrations (GRPO-K002 renamed, GRPO-K003 removed) and of the
deprecations that carry a fix (GRPO-D...). The file is edited in place of the old keys only: comments, key order
and formatting stay. A removal that needs a person's decision (e.g. vllm_device -> vllm_mode) is still made,
since TRL 1.16 refuses the old key, but a comment takes the old line's place saying what to decide.

A config written for an older release (`--from`, else the installed trl or the repository's pin) also gets that
release's defaults written out where TRL 1.16 changed them (loss_type bnpo for 0.19, beta 0.04 for 0.16, ...), each
with a comment, so that the migrated run trains as the old one did; what 1.16 cannot keep (a prompt truncation
that 1.16 no longer does) is listed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grpo_schema.commands.migration import migrate_config, release_defaults_block
from grpo_schema.commands.migration_between import Migrated, carried_defaults, migrate_between
from grpo_schema.commands.migration_comments import retarget_comments
from grpo_schema.commands.migration_text import (
    MIGRATION_CODES,
    cannot_keep,
    migrate_text,
    migration_fixes,
    unified_diff,
)
from grpo_schema.commands.options import EXIT_OK, EXIT_USAGE, UsageError, add_profiles, chosen_profiles, trl_options
from grpo_schema.engine.loader import load_yaml
from grpo_schema.render.text import RELEASE_SOURCES

__all__ = [  # the migration's parts, imported from here by the surfaces that share them
    "MIGRATION_CODES",
    "Migrated",
    "cannot_keep",
    "carried_defaults",
    "migrate_between",
    "migrate_command",
    "migrate_config",
    "migrate_text",
    "migration_fixes",
    "release_defaults_block",
    "retarget_comments",
    "target_release",
    "unified_diff",
]

EXIT_CHANGES = 1  # a diff to apply, or a key that could not be migrated
# Why a release was chosen, in the words the text output uses (grpo_schema.versions.detect's sources).
SOURCES = {"flag": "--from"}
EPILOG = """exit status:
  0  nothing to migrate (or, with --write, every migration was written)
  1  without --write: the files need migrating (the diff is printed); with --write: some migration could not be
     applied automatically (the reason is printed)
  2  bad usage, or a file that cannot be read or is not a YAML mapping"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grpo migrate",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
        description="Rewrite renamed and removed keys (and deprecated ones) for TRL 1.16, keeping comments, "
        "order and formatting. Prints a unified diff unless --write is given.",
    )
    parser.add_argument("paths", nargs="+", metavar="FILE", help="config files (YAML or JSON)")
    parser.add_argument("--write", action="store_true", help="write the migrated files in place")
    add_profiles(parser, help="treat a downstream project's script keys as known (e.g. open-r1)")
    parser.add_argument(
        "--from",
        dest="from_version",
        metavar="X.Y[.Z]",
        help="the TRL release the file was written for (default: the installed trl, else the "
        "repository's pin, else 1.16: only renamed and removed keys)",
    )
    parser.add_argument(
        "--to",
        dest="to_version",
        metavar="X.Y[.Z]",
        default=None,
        help="the release to migrate to: any release from the one the file is written for up to 1.16, the newest "
        "grpo-config knows (the default)",
    )
    return parser


def written_for(args: argparse.Namespace, path: str) -> dict:
    """The release the file was written for and where that came from ({"trl_version", "trl_version_source"}), or a
    UsageError."""
    return trl_options(args.from_version, path)


def target_release(to_version: str | None, from_version: str | None) -> str | None:
    """The release to migrate to (None: 1.16, the engine's own), or a UsageError: it must be a release the tables
    know and not older than the one the file is written for."""
    from grpo_schema.engine.release import REFERENCE
    from grpo_schema.versions import VersionError, newest, parse_version, surface

    if to_version is None:
        return None
    try:
        target = surface(to_version)
    except VersionError as exc:
        raise UsageError(f"--to: {exc}") from None
    if from_version is not None and parse_version(target.release)[:2] < parse_version(from_version)[:2]:
        raise UsageError(
            f"--to {to_version} is older than the release the file is written for (TRL {from_version}): "
            f"grpo migrate goes forward only, from {from_version} to any release up to {newest()}"
        )
    return None if parse_version(target.release)[:2] == parse_version(REFERENCE)[:2] else to_version


def migrate_command(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    status = EXIT_OK
    for path in args.paths:
        if path.endswith((".py", ".ipynb")):  # GRPOConfig(...) keywords rewritten where they are written
            found = _migrate_python(path, args)
            if found == EXIT_USAGE:
                return EXIT_USAGE
            status = max(status, found)
            continue
        try:
            text = Path(path).read_bytes().decode("utf-8")  # bytes: keep CRLF line ends as they are
            profiles = chosen_profiles(args.profile)
        except (OSError, UnicodeDecodeError, UsageError) as exc:
            print(f"grpo migrate: error: cannot read {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            return EXIT_USAGE
        loaded = load_yaml(text)
        if not loaded.ok or not isinstance(loaded.data, dict):
            print(f"grpo migrate: error: {path} is not a YAML mapping; run grpo validate {path}", file=sys.stderr)
            return EXIT_USAGE
        try:
            found = written_for(args, path)
            old_release = found["trl_version"]
            new_release = target_release(args.to_version, old_release)
        except (UsageError, ValueError) as exc:
            print(f"grpo migrate: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        migrated = migrate_config(text, path, profiles, old_release, new_release)
        why = SOURCES.get(found["trl_version_source"]) or RELEASE_SOURCES.get(found["trl_version_source"], "")
        print(
            f"{path}: written for TRL {old_release} ({why}); migrated to TRL {migrated.target}"
            + (" (--to)" if args.to_version else " (the default target)"),
            file=sys.stderr,
        )
        new, done, failed = migrated.text, migrated.done, migrated.failed
        for line in migrated.cannot_keep:
            print(f"{path}: cannot keep: {line}", file=sys.stderr)
        for line in failed:
            print(f"{path}: not migrated: {line}", file=sys.stderr)
        if args.write:
            if new != text:
                Path(path).write_bytes(new.encode("utf-8"))
                print(f"{path}: {len(done)} change{'s' if len(done) != 1 else ''}: " + "; ".join(done), file=sys.stderr)
            status = max(status, EXIT_CHANGES if failed else EXIT_OK)
        elif new != text:
            sys.stdout.write(unified_diff(text, new, path))
            status = EXIT_CHANGES
        else:
            status = max(status, EXIT_CHANGES if failed else EXIT_OK)
    return status


def _migrate_python(path: str, args: argparse.Namespace) -> int:
    from grpo_schema.dialects.python.migrate import migrate_python

    try:
        data = Path(path).read_bytes()
        target = target_release(args.to_version, None) or "1.16.0"
        migrated = migrate_python(data, path, trl_version=target, trl_version_source="flag")
    except (OSError, UnicodeDecodeError, ValueError, UsageError) as exc:
        print(f"grpo migrate: error: {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return EXIT_USAGE
    text = data.decode("utf-8")
    for line in migrated.failed:
        print(f"{path}: not migrated: {line}", file=sys.stderr)
    if migrated.text == text:
        return EXIT_CHANGES if migrated.failed else EXIT_OK
    if args.write:
        Path(path).write_bytes(migrated.text.encode("utf-8"))
        print(
            f"{path}: {len(migrated.done)} change{'s' if len(migrated.done) != 1 else ''}: " + "; ".join(migrated.done),
            file=sys.stderr,
        )
        return EXIT_CHANGES if migrated.failed else EXIT_OK
    sys.stdout.write(unified_diff(text, migrated.text, path))
    return EXIT_CHANGES
